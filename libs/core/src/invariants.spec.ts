import { describe, expect, it } from '@jest/globals';
import { checkInvariants, checkSafetyInvariants, formatViolations, type ViolationCode } from './invariants.js';
import {
  DEFAULT_OPTIONS,
  type Admission,
  type ClusterNode,
  type CycleResult,
  type PendingJob,
  type Preemption,
  type RunningJob,
  type Snapshot,
} from './model.js';

// A small hand-made world with one valid cycle; every test below breaks exactly one thing in a copy of it
// and expects the matching violation, so each check is shown able to fail.
//
// h100 nodes n1, n2, n4 (8 each, n3 cordoned), TPU hosts t1, t2 (4 each, one 2x4 slice s1).
// Cohort research: vision (h100 nominal 8) and nlp (h100 nominal 8, borrowing limit 8); solo (tpu 8) alone.
// Before: nlp-a 8 on n1 and nlp-b 4 on n2 (nlp borrows 4 of vision's idle nominal), vis-low 4 on n2.
// Cycle: vis-high (8) preempts vis-low (within team, lower priority) and nlp-b (reclaim), lands on n2;
// solo-tpu lands on the slice; nlp-c and vis-later stay pending.

const NOW = 1_000_000_000;

function node(name: string, flavor: string, accelerators: number, extra: Partial<ClusterNode> = {}): ClusterNode {
  return { name, flavor, accelerators, cpuMillis: 64_000, memoryMiB: 512_000, topology: { zone: 'z1', block: 'b1', domain: name }, schedulable: true, ...extra };
}

function pending(id: string, team: string, extra: Partial<PendingJob> = {}): PendingJob {
  return {
    id, name: id, team, kind: 'training', priority: 1, preemptible: true, replicas: 1, minReplicas: 1,
    acceleratorsPerReplica: 4, cpuMillisPerReplica: 1000, memoryMiBPerReplica: 1000, flavors: ['h100'],
    flavorSelection: 'preference', topology: { level: 'none' }, expectedRuntimeSeconds: 600, submittedAt: NOW - 1000, ...extra,
  };
}

function running(id: string, team: string, nodes: string[], extra: Partial<RunningJob> = {}): RunningJob {
  const base = pending(id, team, { replicas: nodes.length, minReplicas: nodes.length, submittedAt: NOW - 7_200_000 });
  return {
    ...base, flavor: 'h100', admittedAt: NOW - 3_600_000,
    placement: nodes.map((n, replica) => ({ replica, node: n, accelerators: 4, cpuMillis: 1000, memoryMiB: 1000 })),
    ...extra,
  };
}

function admit(job: PendingJob, flavor: string, nodes: string[], extra: Partial<Admission> = {}): Admission {
  return {
    jobId: job.id, team: job.team, flavor, replicas: nodes.length, borrowed: 0, preempts: [],
    placement: nodes.map((n, replica) => ({ replica, node: n, accelerators: job.acceleratorsPerReplica, cpuMillis: job.cpuMillisPerReplica, memoryMiB: job.memoryMiBPerReplica })),
    ...extra,
  };
}

function world(): { snapshot: Snapshot; result: CycleResult } {
  const visHigh = pending('vis-high', 'vision', { priority: 50, replicas: 2, minReplicas: 2 });
  const soloTpu = pending('solo-tpu', 'solo', { replicas: 2, minReplicas: 2, flavors: ['tpu'], topology: { level: 'domain', tpuShape: '2x4' } });
  const nlpC = pending('nlp-c', 'nlp');
  const visLater = pending('vis-later', 'vision', { acceleratorsPerReplica: 8 });
  const preemptions: Preemption[] = [
    { victimJobId: 'vis-low', victimTeam: 'vision', preemptorJobId: 'vis-high', kind: 'WithinTeam', message: 'lower priority' },
    { victimJobId: 'nlp-b', victimTeam: 'nlp', preemptorJobId: 'vis-high', kind: 'ReclaimWithinCohort', message: 'reclaim' },
  ];
  const snapshot: Snapshot = {
    now: NOW,
    flavors: [
      { name: 'h100', kind: 'nvidia-gpu', resourceName: 'nvidia.com/gpu', relativeSpeed: 1, costPerHour: 4 },
      { name: 'tpu', kind: 'google-tpu', resourceName: 'google.com/tpu', relativeSpeed: 1, costPerHour: 3 },
    ],
    nodes: [
      node('n1', 'h100', 8), node('n2', 'h100', 8), node('n3', 'h100', 8, { schedulable: false }), node('n4', 'h100', 8),
      node('t1', 'tpu', 4, { topology: { zone: 'z1', domain: 's1', tpuShape: '2x4' } }),
      node('t2', 'tpu', 4, { topology: { zone: 'z1', domain: 's1', tpuShape: '2x4' } }),
    ],
    cohorts: [{ name: 'research' }],
    teams: [
      { name: 'vision', cohort: 'research', fairShareWeight: 1, preemption: { withinTeam: 'LowerPriority', reclaimWithinCohort: 'LowerPriority' } },
      { name: 'nlp', cohort: 'research', fairShareWeight: 1, preemption: { withinTeam: 'LowerOrNewerEqualPriority', reclaimWithinCohort: 'Any' } },
      { name: 'solo', cohort: null, fairShareWeight: 1, preemption: { withinTeam: 'Never', reclaimWithinCohort: 'Never' } },
    ],
    quotas: [
      { team: 'vision', flavor: 'h100', nominal: 8, borrowingLimit: null, lendingLimit: null },
      { team: 'nlp', flavor: 'h100', nominal: 8, borrowingLimit: 8, lendingLimit: null },
      { team: 'solo', flavor: 'tpu', nominal: 8, borrowingLimit: null, lendingLimit: null },
    ],
    running: [
      running('nlp-a', 'nlp', ['n1', 'n1'], { priority: 10 }),
      running('nlp-b', 'nlp', ['n2'], { priority: 5 }),
      running('vis-low', 'vision', ['n2'], { priority: 1 }),
    ],
    pending: [nlpC, visHigh, soloTpu, visLater],
    options: { ...DEFAULT_OPTIONS, minRuntimeBeforePreemptionSeconds: 60 },
  };
  const result: CycleResult = {
    admissions: [admit(visHigh, 'h100', ['n2', 'n2'], { preempts: ['vis-low', 'nlp-b'] }), admit(soloTpu, 'tpu', ['t1', 't2'])],
    preemptions,
    reservations: [],
    pending: [
      { jobId: 'nlp-c', code: 'INSUFFICIENT_CAPACITY', message: 'no room', position: 1, estimatedStartAt: null },
      { jobId: 'vis-later', code: 'QUOTA_EXCEEDED', message: 'quota', position: 2, estimatedStartAt: null },
    ],
    stats: { considered: 4, admitted: 2, preempted: 2, reserved: 0 },
  };
  return { snapshot, result };
}

function codes(snapshot: Snapshot, result: CycleResult, preemptedBy?: Map<string, string>): ViolationCode[] {
  return checkInvariants(snapshot, result, preemptedBy ? { preemptedBy } : {}).map((v) => v.code);
}

/** Applies `breakIt` to a fresh copy of the world and returns the violation codes found. */
function broken(breakIt: (w: { snapshot: Snapshot; result: CycleResult }) => void): ViolationCode[] {
  const w = world();
  breakIt(w);
  return codes(w.snapshot, w.result);
}

const job = (s: Snapshot, id: string): PendingJob => s.pending.find((j) => j.id === id)!;
const run = (s: Snapshot, id: string): RunningJob => s.running.find((j) => j.id === id)!;
const adm = (r: CycleResult, id: string): Admission => r.admissions.find((a) => a.jobId === id)!;
const quota = (s: Snapshot, team: string, flavor: string) => s.quotas.find((q) => q.team === team && q.flavor === flavor)!;

describe('checkInvariants', () => {
  it('finds nothing wrong with a valid cycle that admits, preempts within a team and reclaims', () => {
    const { snapshot, result } = world();
    expect(formatViolations(checkInvariants(snapshot, result))).toBe('');
  });

  describe('rule 1: capacity, schedulability, flavor, topology', () => {
    it.each<[string, (w: { snapshot: Snapshot; result: CycleResult }) => void, ViolationCode]>([
      ['a replica lands on a node full of running work', (w) => { adm(w.result, 'vis-high').placement[1]!.node = 'n1'; }, 'NODE_OVERCOMMITTED'],
      ['external usage is ignored', (w) => { w.snapshot.nodes[1]!.external = { accelerators: 2, cpuMillis: 0, memoryMiB: 0 }; }, 'NODE_OVERCOMMITTED'],
      ['CPU is overcommitted', (w) => { w.snapshot.nodes[1]!.cpuMillis = 1500; }, 'NODE_OVERCOMMITTED'],
      ['memory is overcommitted', (w) => { w.snapshot.nodes[1]!.memoryMiB = 1500; }, 'NODE_OVERCOMMITTED'],
      ['a replica lands on a cordoned node', (w) => { adm(w.result, 'vis-high').placement[1]!.node = 'n3'; }, 'NODE_UNSCHEDULABLE'],
      ['a replica lands on a node that does not exist', (w) => { adm(w.result, 'vis-high').placement[1]!.node = 'gone'; }, 'NODE_UNKNOWN'],
      ['a replica lands on a node of another flavor', (w) => { adm(w.result, 'vis-high').placement[1]!.node = 't1'; }, 'NODE_FLAVOR_MISMATCH'],
      ['the admitted flavor is one the job does not accept', (w) => { job(w.snapshot, 'vis-high').flavors = ['a100']; }, 'FLAVOR_NOT_ACCEPTED'],
      ['a TPU gang spans two slices', (w) => { w.snapshot.nodes[5]!.topology.domain = 's2'; }, 'TOPOLOGY_BROKEN'],
      ['a TPU gang lands on hosts of another shape', (w) => { w.snapshot.nodes[5]!.topology.tpuShape = '4x4'; }, 'TOPOLOGY_BROKEN'],
      ['a same-zone gang lands on a node without a zone label', (w) => {
        job(w.snapshot, 'vis-high').topology = { level: 'zone' };
        delete w.snapshot.nodes[1]!.topology.zone;
      }, 'TOPOLOGY_BROKEN'],
    ])('fails when %s', (_name, breakIt, want) => {
      expect(broken(breakIt)).toContain(want);
    });

    it('does not blame the cycle for a node that was already overcommitted and received nothing', () => {
      expect(broken((w) => { w.snapshot.nodes[0]!.external = { accelerators: 8, cpuMillis: 0, memoryMiB: 0 }; })).toEqual([]);
    });
  });

  describe('rule 2: gangs are all or nothing', () => {
    it.each<[string, (w: { snapshot: Snapshot; result: CycleResult }) => void, ViolationCode]>([
      ['fewer replicas than minReplicas are admitted', (w) => {
        const a = adm(w.result, 'vis-high');
        a.replicas = 1;
        a.placement.pop();
      }, 'GANG_SIZE'],
      ['more replicas than asked are admitted', (w) => {
        const a = adm(w.result, 'solo-tpu');
        a.replicas = 3;
        a.placement.push({ ...a.placement[0]!, replica: 2 });
      }, 'GANG_SIZE'],
      ['a replica is placed twice', (w) => { adm(w.result, 'vis-high').placement[1]!.replica = 0; }, 'GANG_REPLICAS'],
      ['the replica count and the placements disagree', (w) => { adm(w.result, 'vis-high').replicas = 1; }, 'GANG_REPLICAS'],
      ['a replica gets fewer accelerators than it asks for', (w) => { adm(w.result, 'vis-high').placement[1]!.accelerators = 2; }, 'GANG_RESOURCES'],
      ['a victim is preempted twice', (w) => { w.result.preemptions.push({ ...w.result.preemptions[0]! }); }, 'DUPLICATE_DECISION'],
      ['a job is admitted twice', (w) => { w.result.admissions.push(adm(w.result, 'solo-tpu')); }, 'DUPLICATE_DECISION'],
    ])('fails when %s', (_name, breakIt, want) => {
      expect(broken(breakIt)).toContain(want);
    });

    it('accepts an elastic gang admitted between minReplicas and replicas', () => {
      expect(broken((w) => { job(w.snapshot, 'solo-tpu').replicas = 4; })).toEqual([]);
    });
  });

  describe('rule 3: quotas', () => {
    it.each<[string, (w: { snapshot: Snapshot; result: CycleResult }) => void, ViolationCode]>([
      ['a team has no quota for the admitted flavor', (w) => { w.snapshot.quotas = w.snapshot.quotas.filter((q) => q.team !== 'solo'); }, 'NO_QUOTA'],
      ['a team exceeds nominal + borrowingLimit', (w) => { Object.assign(quota(w.snapshot, 'vision', 'h100'), { nominal: 4, borrowingLimit: 2 }); }, 'TEAM_OVER_QUOTA'],
      ['a team without a cohort goes above nominal', (w) => { Object.assign(quota(w.snapshot, 'solo', 'tpu'), { nominal: 4, borrowingLimit: null }); }, 'TEAM_OVER_QUOTA'],
      ['an admission is charged to another team', (w) => { adm(w.result, 'solo-tpu').team = 'vision'; }, 'WRONG_TEAM'],
      ['borrowed is larger than the admission', (w) => { adm(w.result, 'vis-high').borrowed = 9; }, 'BORROWED_FIELD'],
      ['a team without a cohort reports borrowing', (w) => { adm(w.result, 'solo-tpu').borrowed = 2; }, 'BORROWED_FIELD'],
    ])('fails when %s', (_name, breakIt, want) => {
      expect(broken(breakIt)).toContain(want);
    });

    it('fails when a borrower is admitted beyond what the cohort has idle (and the cohort exceeds its nominal sum)', () => {
      const got = broken((w) => {
        const nlpC = job(w.snapshot, 'nlp-c');
        w.result.admissions.push(admit(nlpC, 'h100', ['n4'], { borrowed: 4 }));
        w.result.pending = [{ ...w.result.pending[1]!, position: 1 }];
        w.result.stats.admitted = 3;
      });
      expect(got).toEqual(['COHORT_OVERLENT', 'COHORT_OVER_CAPACITY']);
    });

    it('fails when a borrower uses nominal the lender may not lend (lendingLimit)', () => {
      // No preemption this time: vision keeps vis-low (4 of 8), so 4 are idle, but vision lends at most 2.
      const w = world();
      quota(w.snapshot, 'vision', 'h100').lendingLimit = 2;
      w.snapshot.running = w.snapshot.running.filter((j) => j.id !== 'nlp-b');
      const nlpC = job(w.snapshot, 'nlp-c');
      w.result.admissions = [admit(nlpC, 'h100', ['n4'], { borrowed: 4 }), adm(w.result, 'solo-tpu')];
      w.result.preemptions = [];
      w.result.pending = [
        { jobId: 'vis-high', code: 'INSUFFICIENT_CAPACITY', message: '', position: 1, estimatedStartAt: null },
        { jobId: 'vis-later', code: 'QUOTA_EXCEEDED', message: '', position: 2, estimatedStartAt: null },
      ];
      w.result.stats = { considered: 4, admitted: 2, preempted: 0, reserved: 0 };
      expect(codes(w.snapshot, w.result)).toEqual(['COHORT_OVERLENT']);
      quota(w.snapshot, 'vision', 'h100').lendingLimit = 4;
      expect(codes(w.snapshot, w.result)).toEqual([]);
    });

    it('does not blame a team for using its guaranteed share while a quota change left the cohort over-lent', () => {
      const w = world();
      quota(w.snapshot, 'vision', 'h100').lendingLimit = 0; // all 8 of vision's nominal is guaranteed
      Object.assign(quota(w.snapshot, 'nlp', 'h100'), { nominal: 0, borrowingLimit: null }); // nlp now borrows 12
      const visSmall = pending('vis-small', 'vision');
      w.snapshot.pending.push(visSmall);
      w.result = {
        admissions: [admit(visSmall, 'h100', ['n4'])], // vision: 4 + 4 = 8, within its guarantee
        preemptions: [],
        reservations: [],
        pending: ['nlp-c', 'vis-high', 'solo-tpu', 'vis-later'].map((jobId, i) => ({ jobId, code: 'QUOTA_EXCEEDED' as const, message: '', position: i + 1, estimatedStartAt: null })),
        stats: { considered: 5, admitted: 1, preempted: 0, reserved: 0 },
      };
      expect(codes(w.snapshot, w.result)).toEqual([]);
      // The same admission by a team that lends its nominal makes the over-lending worse: blamed.
      quota(w.snapshot, 'vision', 'h100').lendingLimit = null;
      expect(codes(w.snapshot, w.result)).toEqual(['COHORT_OVERLENT', 'COHORT_OVER_CAPACITY']);
    });

    it('does not blame the cycle for a quota lowered below usage where it admitted nothing', () => {
      expect(broken((w) => { quota(w.snapshot, 'nlp', 'h100').borrowingLimit = 0; })).toEqual([]);
    });
  });

  describe('rule 4: preemption legality', () => {
    it.each<[string, (w: { snapshot: Snapshot; result: CycleResult }) => void, ViolationCode]>([
      ['preemption is disabled', (w) => { w.snapshot.options.preemption = false; }, 'PREEMPTION_DISABLED'],
      ['the victim is not preemptible', (w) => { run(w.snapshot, 'vis-low').preemptible = false; }, 'VICTIM_NOT_PREEMPTIBLE'],
      ['the victim has run less than the minimum runtime', (w) => { run(w.snapshot, 'vis-low').admittedAt = NOW - 10_000; }, 'MIN_RUNTIME'],
      ['the victim holds another flavor than the one admitted', (w) => { run(w.snapshot, 'vis-low').flavor = 'tpu'; }, 'VICTIM_WRONG_FLAVOR'],
      ['a reclaim is reported as within-team', (w) => { w.result.preemptions[1]!.kind = 'WithinTeam'; }, 'PREEMPTION_KIND'],
      ['within a team, an equal-priority job is preempted under LowerPriority', (w) => { run(w.snapshot, 'vis-low').priority = 50; }, 'WITHIN_TEAM_POLICY'],
      ['within a team, anything is preempted under Never', (w) => { w.snapshot.teams[0]!.preemption.withinTeam = 'Never'; }, 'WITHIN_TEAM_POLICY'],
      ['reclaim happens under policy Never', (w) => { w.snapshot.teams[0]!.preemption.reclaimWithinCohort = 'Never'; }, 'RECLAIM_POLICY'],
      ['reclaim takes a higher-priority job under LowerPriority', (w) => { run(w.snapshot, 'nlp-b').priority = 60; }, 'RECLAIM_POLICY'],
      ['reclaim crosses cohorts', (w) => { w.snapshot.teams[1]!.cohort = 'other'; }, 'RECLAIM_POLICY'],
      ['the victim team was within its nominal quota', (w) => { quota(w.snapshot, 'nlp', 'h100').nominal = 12; }, 'VICTIM_NOT_BORROWING'],
      ['the reclaiming team ends above its nominal quota', (w) => { quota(w.snapshot, 'vision', 'h100').nominal = 4; }, 'PREEMPTOR_BORROWS'],
    ])('fails when %s', (_name, breakIt, want) => {
      expect(broken(breakIt)).toContain(want);
    });

    it('LowerOrNewerEqualPriority allows a newer equal-priority victim and refuses an older one', () => {
      const setUp = (victimSubmittedAt: number) => {
        const w = world();
        const nlpC = job(w.snapshot, 'nlp-c');
        const nlpA = run(w.snapshot, 'nlp-a');
        Object.assign(nlpA, { priority: 1, submittedAt: victimSubmittedAt });
        w.result.admissions.push(admit(nlpC, 'h100', ['n1'], { preempts: ['nlp-a'] }));
        w.result.preemptions.push({ victimJobId: 'nlp-a', victimTeam: 'nlp', preemptorJobId: 'nlp-c', kind: 'WithinTeam', message: '' });
        w.result.pending = [{ ...w.result.pending[1]!, position: 1 }];
        w.result.stats = { ...w.result.stats, admitted: 3, preempted: 3 };
        return codes(w.snapshot, w.result);
      };
      expect(setUp(nlpSubmittedAt() + 1)).toEqual([]);
      expect(setUp(nlpSubmittedAt() - 1)).toEqual(['WITHIN_TEAM_POLICY']);
    });
  });

  describe('rule 5: consistency', () => {
    it.each<[string, (w: { snapshot: Snapshot; result: CycleResult }) => void, ViolationCode]>([
      ['a job is admitted and preempted', (w) => {
        w.result.preemptions.push({ victimJobId: 'solo-tpu', victimTeam: 'solo', preemptorJobId: 'vis-high', kind: 'ReclaimWithinCohort', message: '' });
      }, 'ADMITTED_AND_PREEMPTED'],
      ['an admission does not list its victim', (w) => { adm(w.result, 'vis-high').preempts = ['nlp-b']; }, 'PREEMPTION_UNLINKED'],
      ['an admission lists a victim that is not preempted', (w) => { adm(w.result, 'solo-tpu').preempts = ['nlp-a']; }, 'PREEMPTION_UNLINKED'],
      ['the preemptor is not admitted', (w) => { w.result.preemptions[0]!.preemptorJobId = 'vis-later'; }, 'PREEMPTION_UNLINKED'],
      ['a victim is not a running job', (w) => { w.result.preemptions[0]!.victimJobId = 'ghost'; }, 'UNKNOWN_JOB'],
      ['an admitted job is not pending', (w) => { w.result.admissions.push(admit(pending('ghost', 'nlp'), 'h100', ['n4'])); }, 'UNKNOWN_JOB'],
    ])('fails when %s', (_name, breakIt, want) => {
      expect(broken(breakIt)).toContain(want);
    });

    it('fails when a victim was not needed: the cycle still fits with it running (cheapest sufficient set)', () => {
      const w = world();
      w.snapshot.running.push(running('vis-spare', 'vision', ['n4'], { priority: 0 }));
      // vision now uses 8 (vis-low + vis-spare); preempting both still leaves vis-high within nominal.
      adm(w.result, 'vis-high').preempts.push('vis-spare');
      w.result.preemptions.push({ victimJobId: 'vis-spare', victimTeam: 'vision', preemptorJobId: 'vis-high', kind: 'WithinTeam', message: '' });
      w.result.stats.preempted = 3;
      // With vis-spare back vision would use 12 > nominal 8 + unlimited borrowing, but nlp borrows nothing
      // after the reclaim, so only vision's idle share counts: borrowing 4 of nlp's 0 idle → needed.
      expect(codes(w.snapshot, w.result)).toEqual([]);
      // Give the cohort room (nlp lends 8 more): now vis-spare could have stayed.
      quota(w.snapshot, 'nlp', 'h100').nominal = 16;
      expect(codes(w.snapshot, w.result)).toContain('VICTIM_UNNEEDED');
      // A reservation holds quota too: vis-later's 8 reserved on n1 leave vision no room for vis-spare.
      w.result.reservations.push({ jobId: 'vis-later', flavor: 'h100', startAt: NOW + 60_000, nodes: [{ node: 'n1', accelerators: 8 }] });
      w.result.stats.reserved = 1;
      expect(codes(w.snapshot, w.result)).not.toContain('VICTIM_UNNEEDED');
    });

    it('fails when a job preempts the job that preempted it in an earlier cycle', () => {
      const { snapshot, result } = world();
      expect(codes(snapshot, result, new Map([['vis-high', 'vis-low']]))).toEqual(['PREEMPTION_CYCLE']);
      expect(codes(snapshot, result, new Map([['vis-high', 'someone-else']]))).toEqual([]);
      // The same history carried by the running job itself (RunningJob.preempted, kept by the app).
      run(snapshot, 'vis-low').preempted = ['vis-high'];
      expect(codes(snapshot, result)).toEqual(['PREEMPTION_CYCLE']);
    });
  });

  describe('rule 7: every pending job is accounted for once', () => {
    it.each<[string, (w: { snapshot: Snapshot; result: CycleResult }) => void, ViolationCode]>([
      ['a pending job has no reason', (w) => { w.result.pending = [{ ...w.result.pending[1]!, position: 1 }]; }, 'PENDING_MISSING'],
      ['a pending job has two reasons', (w) => { w.result.pending.push({ ...w.result.pending[0]!, position: 3 }); }, 'PENDING_TWICE'],
      ['an admitted job also has a pending reason', (w) => {
        w.result.pending.push({ jobId: 'solo-tpu', code: 'QUOTA_EXCEEDED', message: '', position: 3, estimatedStartAt: null });
      }, 'PENDING_AND_ADMITTED'],
      ['positions skip a number', (w) => { w.result.pending[1]!.position = 3; }, 'PENDING_POSITION'],
      ['a reason names an unknown job', (w) => {
        w.result.pending.push({ jobId: 'ghost', code: 'INVALID', message: '', position: 3, estimatedStartAt: null });
      }, 'UNKNOWN_JOB'],
      ['an admitted job holds a reservation', (w) => { w.result.reservations.push({ jobId: 'solo-tpu', flavor: 'tpu', startAt: NOW, nodes: [] }); }, 'RESERVATION_INVALID'],
      ['a reservation holds a node of another flavor', (w) => {
        w.result.reservations.push({ jobId: 'vis-later', flavor: 'h100', startAt: NOW, nodes: [{ node: 't1', accelerators: 4 }] });
        w.result.stats.reserved = 1;
      }, 'RESERVATION_INVALID'],
      ['stats disagree with the lists', (w) => { w.result.stats.admitted = 1; }, 'STATS_MISMATCH'],
    ])('fails when %s', (_name, breakIt, want) => {
      expect(broken(breakIt)).toContain(want);
    });
  });

  it('formats violations one per line with rule and code', () => {
    const w = world();
    w.snapshot.options.preemption = false;
    w.result.stats.admitted = 7;
    expect(formatViolations(checkInvariants(w.snapshot, w.result)).split('\n')).toEqual([
      '[rule 4 PREEMPTION_DISABLED] 2 preemption(s) although options.preemption is false',
      '[rule 7 STATS_MISMATCH] stats.admitted is 7 but the result lists 2',
    ]);
  });
});

describe('checkSafetyInvariants (the runtime guard)', () => {
  const safety = (breakIt: (w: { snapshot: Snapshot; result: CycleResult }) => void): ViolationCode[] => {
    const w = world();
    breakIt(w);
    return checkSafetyInvariants(w.snapshot, w.result).map((v) => v.code);
  };

  it('finds nothing wrong with the valid cycle', () => {
    expect(safety(() => {})).toEqual([]);
  });

  it.each<[string, (w: { snapshot: Snapshot; result: CycleResult }) => void, ViolationCode]>([
    ['a node is overcommitted', (w) => { adm(w.result, 'vis-high').placement[1]!.node = 'n1'; }, 'NODE_OVERCOMMITTED'],
    ['a team goes over nominal + borrowing limit', (w) => { Object.assign(quota(w.snapshot, 'vision', 'h100'), { nominal: 4, borrowingLimit: 2 }); }, 'TEAM_OVER_QUOTA'],
    ['a job is admitted twice', (w) => { w.result.admissions.push(adm(w.result, 'vis-high')); }, 'DUPLICATE_DECISION'],
  ])('fails when %s', (_name, breakIt, want) => {
    expect(safety(breakIt)).toContain(want);
  });

  it('leaves the policy rules (preemption legality, pending accounting) to checkInvariants', () => {
    const noReason = (w: { snapshot: Snapshot; result: CycleResult }): void => { w.result.pending = []; };
    expect(broken(noReason)).toContain('PENDING_MISSING');
    expect(safety(noReason)).toEqual([]);
  });
});

function nlpSubmittedAt(): number {
  return pending('x', 'nlp').submittedAt;
}
