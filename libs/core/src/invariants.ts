/**
 * Invariants of one scheduling cycle: the "rules the scheduler never breaks" (DESIGN.md) checked on
 * `runCycle`'s output against the snapshot it was given. Used by the property tests and, at run time,
 * by the scheduler service as a guard before it commits a cycle's decisions.
 *
 * Cost: linear in the size of the snapshot plus the result (a few hash maps, no sorting).
 *
 * Attribution. The snapshot itself may already break a rule through no fault of the cycle (a quota was
 * lowered below current usage, a node's external usage grew). A capacity or quota rule is therefore
 * reported only where the cycle added load: a node that received a replica, a team × flavor that got an
 * admission, a cohort × flavor whose over-lending the cycle made worse or in which a borrower was admitted.
 * A team may always use its guaranteed (non-lendable) share, even when a quota change left its cohort
 * over-lent: that use changes neither the cohort's borrowing nor its lendable idle, and is not blamed.
 *
 * Rules (numbers as in DESIGN.md):
 * 1. capacity: no node over its allocatable accelerators / CPU / memory (running + external + new − victims);
 *    new replicas only on schedulable nodes of the admitted flavor, a flavor the job accepts, and within
 *    the job's topology requirement.
 * 2. gangs: minReplicas ≤ admitted replicas ≤ replicas; replicas 0..n−1 each placed once with the job's
 *    per-replica resources; a victim is a whole running job, preempted once.
 * 3. quota: team × flavor usage ≤ nominal + borrowingLimit (no cohort: ≤ nominal; no quota: none);
 *    in a cohort, Σ borrowed ≤ Σ lendable idle (each member lends at most min(lendingLimit, idle nominal)),
 *    hence Σ usage ≤ Σ nominal.
 * 4. preemption legality: victims preemptible, preemption enabled, minimum runtime honoured, victim on
 *    the flavor being admitted; within a team by the team's policy; across teams only from a team that is
 *    borrowing that flavor, by the preemptor team's reclaim policy, with the preemptor team ending within
 *    its nominal quota.
 * 5. never cycles: a victim is never a job that earlier preempted its preemptor (`RunningJob.preempted`,
 *    or `context.preemptedBy` across cycles);
 *    cheapest sufficient victims: no victim could have kept running — put back right after the admission
 *    it was preempted for, its nodes, its team's ceiling and its cohort's lending would all still hold
 *    (reservations count as holding their nodes and quota);
 *    consistency: no job both admitted and preempted; no job preempts its own preemptor (also across
 *    cycles when `context.preemptedBy` is given); every preemption belongs to an admission that lists it.
 * 7. accounting: every pending job is either admitted or listed in `pending` exactly once, never both;
 *    positions are 1..n in order; stats match the lists.
 */
import type {
  Admission,
  ClusterNode,
  CycleResult,
  PendingJob,
  Preemption,
  Quota,
  ReplicaPlacement,
  RunningJob,
  Snapshot,
  Team,
} from './model.js';
import { isMultiRole, rolesOf } from './roles.js';

export type InvariantRule = 1 | 2 | 3 | 4 | 5 | 7;

export type ViolationCode =
  // rule 1
  | 'NODE_OVERCOMMITTED'
  | 'NODE_UNKNOWN'
  | 'NODE_UNSCHEDULABLE'
  | 'NODE_FLAVOR_MISMATCH'
  | 'NODE_SELECTOR_MISMATCH'
  | 'FLAVOR_NOT_ACCEPTED'
  | 'TOPOLOGY_BROKEN'
  // rule 2
  | 'GANG_SIZE'
  | 'GANG_REPLICAS'
  | 'GANG_RESOURCES'
  // rule 3
  | 'WRONG_TEAM'
  | 'NO_QUOTA'
  | 'TEAM_OVER_QUOTA'
  | 'COHORT_OVERLENT'
  | 'COHORT_OVER_CAPACITY'
  | 'BORROWED_FIELD'
  // rule 4
  | 'PREEMPTION_DISABLED'
  | 'VICTIM_NOT_PREEMPTIBLE'
  | 'MIN_RUNTIME'
  | 'VICTIM_WRONG_FLAVOR'
  | 'PREEMPTION_KIND'
  | 'WITHIN_TEAM_POLICY'
  | 'RECLAIM_POLICY'
  | 'VICTIM_NOT_BORROWING'
  | 'PREEMPTOR_BORROWS'
  /** A budget stop (budget-block.ts) of a job no used-up `stop` budget of its team counts. */
  | 'BUDGET_STOP_UNCOVERED'
  // rule 5
  | 'VICTIM_UNNEEDED'
  | 'ADMITTED_AND_PREEMPTED'
  | 'PREEMPTION_CYCLE'
  | 'PREEMPTION_UNLINKED'
  | 'DUPLICATE_DECISION'
  | 'UNKNOWN_JOB'
  // rule 7
  | 'PENDING_MISSING'
  | 'PENDING_TWICE'
  | 'PENDING_AND_ADMITTED'
  | 'PENDING_POSITION'
  | 'RESERVATION_INVALID'
  | 'STATS_MISMATCH';

export interface Violation {
  rule: InvariantRule;
  code: ViolationCode;
  /** The job the violation is about, when there is one. */
  jobId?: string;
  message: string;
}

export interface InvariantContext {
  /** Victim id → id of the job that preempted it in an earlier cycle (to detect preemption cycles). */
  preemptedBy?: ReadonlyMap<string, string>;
}

/** Checks one cycle's result against its snapshot. Returns every violation found (empty = all rules hold). */
export function checkInvariants(given: Snapshot, givenResult: CycleResult, context: InvariantContext = {}): Violation[] {
  const out: Violation[] = [];
  const { snapshot, result } = movesAsAdmissions(given, givenResult, out);
  const ix = indexSnapshot(snapshot);
  const decided = checkDecisionLists(ix, result, out);
  for (const admission of result.admissions) checkAdmissionShape(ix, admission, out);
  checkNodeCapacity(ix, result, decided.victims, out);
  checkQuotas(ix, result, decided.victims, out);
  checkResourceCaps(ix, result, decided.victims, out);
  checkPreemptionLegality(ix, result, context, out);
  checkVictimsNeeded(ix, result, decided.victims, out);
  checkPendingAccounting(ix, result, decided.admitted, out);
  return out;
}

/**
 * The runtime guard's subset: the rules whose breach would corrupt the committed state — decision lists
 * consistent (rule 5's consistency part), gang shape and placement on known schedulable nodes of the
 * right flavor within topology (rules 1–2), node capacity (rule 1) and quota and cohort lending (rule 3).
 * Policy rules — preemption legality, cheapest sufficient victims, pending accounting (4, 5, 7) — are
 * checked by the property tests on every core change (checkInvariants); at run time they would cost
 * more than the cycle itself on preemption-heavy cycles (bench:core `checkMs` against `guardMs`).
 */
export function checkSafetyInvariants(given: Snapshot, givenResult: CycleResult): Violation[] {
  const out: Violation[] = [];
  const { snapshot, result } = movesAsAdmissions(given, givenResult, out);
  const ix = indexSnapshot(snapshot);
  const decided = checkDecisionLists(ix, result, out);
  for (const admission of result.admissions) checkAdmissionShape(ix, admission, out);
  checkNodeCapacity(ix, result, decided.victims, out);
  checkQuotas(ix, result, decided.victims, out);
  checkResourceCaps(ix, result, decided.victims, out);
  return out;
}

/**
 * Moves (moves.ts) checked as what they are: the moved job gives up its running placement and is admitted
 * again on its new flavor. So every rule on admissions (shape, nodes, capacity, quota) applies to the new
 * placement, with the old one released. A move must name a running job that checkpoints and may be
 * preempted, on another flavor it accepts, once, and not also be admitted or preempted.
 */
function movesAsAdmissions(snapshot: Snapshot, result: CycleResult, out: Violation[]): { snapshot: Snapshot; result: CycleResult } {
  const moves = result.moves ?? [];
  if (moves.length === 0) return { snapshot, result };
  const running = new Map(snapshot.running.map((j) => [j.id, j]));
  const decided = new Set([...result.admissions.map((a) => a.jobId), ...result.preemptions.map((p) => p.victimJobId)]);
  const moved = new Map<string, RunningJob>();
  const admissions: Admission[] = [];
  for (const m of moves) {
    const job = running.get(m.jobId);
    if (job === undefined) {
      violation(out, 5, 'UNKNOWN_JOB', `move of ${m.jobId}, which is not a running job of the snapshot`, m.jobId);
      continue;
    }
    if (moved.has(m.jobId) || decided.has(m.jobId)) {
      violation(out, 5, 'DUPLICATE_DECISION', `job ${m.jobId} is moved twice, or moved and also admitted or preempted, in one cycle`, m.jobId);
      continue;
    }
    if (m.from !== job.flavor || m.to === job.flavor) {
      violation(out, 1, 'FLAVOR_NOT_ACCEPTED', `job ${m.jobId} runs on ${job.flavor} but is moved from ${m.from} to ${m.to}`, m.jobId);
    }
    if (job.checkpoint === undefined || !job.preemptible) {
      violation(out, 4, 'VICTIM_NOT_PREEMPTIBLE', `job ${m.jobId} is moved but ${job.checkpoint === undefined ? 'does not checkpoint' : 'is not preemptible'}`, m.jobId);
    }
    moved.set(m.jobId, job);
    admissions.push({ jobId: m.jobId, team: m.team, flavor: m.to, replicas: m.replicas, placement: m.placement, borrowed: m.borrowed, preempts: [] });
  }
  const pending = [...snapshot.pending, ...[...moved.values()].map((j) => ({ ...j, replicas: j.placement.length, minReplicas: j.placement.length }))];
  return {
    snapshot: { ...snapshot, running: snapshot.running.filter((j) => !moved.has(j.id)), pending },
    result: {
      ...result,
      admissions: [...result.admissions, ...admissions],
      stats: { ...result.stats, considered: result.stats.considered + moved.size, admitted: result.stats.admitted + admissions.length },
    },
  };
}

/** Readable one-line-per-violation summary, for logs and test failure messages. */
export function formatViolations(violations: readonly Violation[]): string {
  return violations.map((v) => `[rule ${v.rule} ${v.code}] ${v.message}`).join('\n');
}

// ---------------------------------------------------------------------------------------------
// Indexes
// ---------------------------------------------------------------------------------------------

interface SnapshotIndex {
  snapshot: Snapshot;
  pending: Map<string, PendingJob>;
  running: Map<string, RunningJob>;
  nodes: Map<string, ClusterNode>;
  teams: Map<string, Team>;
  quotas: Map<string, Quota>;
  /** Cohort name → member teams. */
  cohortMembers: Map<string, Team[]>;
  /** team\0flavor → accelerators held by running jobs in the snapshot. */
  usage: Map<string, number>;
}

const key = (team: string, flavor: string): string => `${team}\u0000${flavor}`;

function indexSnapshot(snapshot: Snapshot): SnapshotIndex {
  const ix: SnapshotIndex = {
    snapshot,
    pending: new Map(snapshot.pending.map((j) => [j.id, j])),
    running: new Map(snapshot.running.map((j) => [j.id, j])),
    nodes: new Map(snapshot.nodes.map((n) => [n.name, n])),
    teams: new Map(snapshot.teams.map((t) => [t.name, t])),
    quotas: new Map(snapshot.quotas.map((q) => [key(q.team, q.flavor), q])),
    cohortMembers: new Map(),
    usage: new Map(),
  };
  for (const team of snapshot.teams) {
    if (team.cohort === null) continue;
    const members = ix.cohortMembers.get(team.cohort);
    if (members) members.push(team);
    else ix.cohortMembers.set(team.cohort, [team]);
  }
  for (const job of snapshot.running) add(ix.usage, key(job.team, job.flavor), acceleratorsOf(job));
  return ix;
}

function acceleratorsOf(job: { placement: readonly { accelerators: number }[] }): number {
  let sum = 0;
  for (const p of job.placement) sum += p.accelerators;
  return sum;
}

function add(map: Map<string, number>, k: string, delta: number): void {
  map.set(k, (map.get(k) ?? 0) + delta);
}

function violation(out: Violation[], rule: InvariantRule, code: ViolationCode, message: string, jobId?: string): void {
  out.push(jobId === undefined ? { rule, code, message } : { rule, code, jobId, message });
}

// ---------------------------------------------------------------------------------------------
// Rule 5 (and 7): the decision lists refer to real jobs, once each, and never both ways
// ---------------------------------------------------------------------------------------------

interface Decided {
  admitted: Map<string, Admission>;
  /** Victims that are real running jobs, by id. */
  victims: Map<string, RunningJob>;
}

function checkDecisionLists(ix: SnapshotIndex, result: CycleResult, out: Violation[]): Decided {
  const admitted = new Map<string, Admission>();
  for (const a of result.admissions) {
    if (!ix.pending.has(a.jobId)) {
      violation(out, 7, 'UNKNOWN_JOB', `admission of ${a.jobId}, which is not a pending job of the snapshot`, a.jobId);
    }
    if (admitted.has(a.jobId)) {
      violation(out, 5, 'DUPLICATE_DECISION', `job ${a.jobId} is admitted twice in one cycle`, a.jobId);
    }
    admitted.set(a.jobId, a);
  }
  const victims = new Map<string, RunningJob>();
  const seenVictims = new Set<string>();
  for (const p of result.preemptions) {
    const victim = ix.running.get(p.victimJobId);
    if (!victim) {
      violation(out, 5, 'UNKNOWN_JOB', `preemption of ${p.victimJobId}, which is not a running job of the snapshot`, p.victimJobId);
    } else {
      victims.set(victim.id, victim);
      if (victim.team !== p.victimTeam) {
        violation(out, 5, 'UNKNOWN_JOB', `preemption of ${victim.id} names team ${p.victimTeam} but the job belongs to ${victim.team}`, victim.id);
      }
    }
    if (seenVictims.has(p.victimJobId)) {
      violation(out, 2, 'DUPLICATE_DECISION', `job ${p.victimJobId} is preempted more than once in one cycle`, p.victimJobId);
    }
    seenVictims.add(p.victimJobId);
    if (admitted.has(p.victimJobId)) {
      violation(out, 5, 'ADMITTED_AND_PREEMPTED', `job ${p.victimJobId} is both admitted and preempted in one cycle`, p.victimJobId);
    }
    if (p.victimJobId === p.preemptorJobId) {
      violation(out, 5, 'PREEMPTION_CYCLE', `job ${p.victimJobId} preempts itself`, p.victimJobId);
    }
  }
  // Every preemption belongs to the admission it made room for, and vice versa.
  const byPair = new Set(result.preemptions.map((p) => `${p.preemptorJobId}\u0000${p.victimJobId}`));
  for (const p of result.preemptions) {
    const a = admitted.get(p.preemptorJobId);
    if (!a) {
      violation(out, 5, 'PREEMPTION_UNLINKED', `job ${p.victimJobId} is preempted for ${p.preemptorJobId}, which is not admitted in this cycle`, p.victimJobId);
    } else if (!a.preempts.includes(p.victimJobId)) {
      violation(out, 5, 'PREEMPTION_UNLINKED', `job ${p.victimJobId} is preempted for ${a.jobId}, whose admission does not list it in preempts`, p.victimJobId);
    }
    if (byPair.has(`${p.victimJobId}\u0000${p.preemptorJobId}`)) {
      violation(out, 5, 'PREEMPTION_CYCLE', `jobs ${p.preemptorJobId} and ${p.victimJobId} preempt each other in one cycle`, p.victimJobId);
    }
  }
  for (const a of result.admissions) {
    for (const victimId of a.preempts) {
      if (!byPair.has(`${a.jobId}\u0000${victimId}`)) {
        violation(out, 5, 'PREEMPTION_UNLINKED', `admission of ${a.jobId} lists ${victimId} in preempts but no preemption of it by ${a.jobId} is reported`, a.jobId);
      }
    }
  }
  return { admitted, victims };
}

// ---------------------------------------------------------------------------------------------
// Rules 1 and 2 on one admission: flavor, nodes, topology, gang shape
// ---------------------------------------------------------------------------------------------

function checkAdmissionShape(ix: SnapshotIndex, a: Admission, out: Violation[]): void {
  const job = ix.pending.get(a.jobId);
  if (!job) return; // reported as UNKNOWN_JOB
  const id = job.id;
  if (a.team !== job.team) {
    violation(out, 3, 'WRONG_TEAM', `admission of ${id} is charged to team ${a.team} but the job belongs to ${job.team}`, id);
  }
  if (!job.flavors.includes(a.flavor)) {
    violation(out, 1, 'FLAVOR_NOT_ACCEPTED', `job ${id} admitted on flavor ${a.flavor}, which it does not accept (accepts ${job.flavors.join(', ')})`, id);
  }
  if (a.replicas < job.minReplicas || a.replicas > job.replicas) {
    violation(out, 2, 'GANG_SIZE', `job ${id} admitted with ${a.replicas} replicas; it needs between ${job.minReplicas} and ${job.replicas}`, id);
  }
  const roles = rolesOf(job);
  const multi = isMultiRole(job);
  if (multi) {
    for (const role of roles) {
      const k = a.placement.filter((p) => p.role === role.name).length;
      if (k < role.minReplicas || k > role.replicas) {
        violation(out, 2, 'GANG_SIZE', `job ${id} admitted with ${k} replicas of role ${role.name}; it needs between ${role.minReplicas} and ${role.replicas}`, id);
      }
    }
  }
  if (a.placement.length !== a.replicas) {
    violation(out, 2, 'GANG_REPLICAS', `job ${id} admitted with ${a.replicas} replicas but ${a.placement.length} placements`, id);
  }
  const seen = new Set<number>();
  for (const p of a.placement) {
    if (!Number.isInteger(p.replica) || p.replica < 0 || p.replica >= a.replicas || seen.has(p.replica)) {
      violation(out, 2, 'GANG_REPLICAS', `job ${id}: replica index ${p.replica} is out of 0..${a.replicas - 1} or placed twice`, id);
    }
    seen.add(p.replica);
    const role = multi ? roles.find((r) => r.name === p.role) : roles[0];
    if (role === undefined) {
      violation(out, 2, 'GANG_RESOURCES', `job ${id} replica ${p.replica} on ${p.node} names no role of the job (${String(p.role)})`, id);
    } else if (p.accelerators !== role.acceleratorsPerReplica || p.cpuMillis !== role.cpuMillisPerReplica || p.memoryMiB !== role.memoryMiBPerReplica) {
      violation(
        out, 2, 'GANG_RESOURCES',
        `job ${id} replica ${p.replica} on ${p.node} gets ${p.accelerators} acc / ${p.cpuMillis}m / ${p.memoryMiB}Mi; ` +
          `each replica${multi ? ` of role ${role.name}` : ''} needs ${role.acceleratorsPerReplica} / ${role.cpuMillisPerReplica}m / ${role.memoryMiBPerReplica}Mi`,
        id,
      );
    }
    const node = ix.nodes.get(p.node);
    if (!node) {
      violation(out, 1, 'NODE_UNKNOWN', `job ${id} replica ${p.replica} placed on unknown node ${p.node}`, id);
      continue;
    }
    if (!node.schedulable) {
      violation(out, 1, 'NODE_UNSCHEDULABLE', `job ${id} replica ${p.replica} placed on unschedulable node ${node.name}`, id);
    }
    if (node.flavor !== a.flavor) {
      violation(out, 1, 'NODE_FLAVOR_MISMATCH', `job ${id} admitted on ${a.flavor} but replica ${p.replica} is on ${node.name} of flavor ${node.flavor}`, id);
    }
  }
  checkTopology(ix, job, a, out);
}

function checkTopology(ix: SnapshotIndex, job: PendingJob, a: Admission, out: Violation[]): void {
  const { level, tpuShape, nodeSelector } = job.topology;
  for (const p of a.placement) {
    const node = ix.nodes.get(p.node);
    const wrong = node && Object.entries(nodeSelector ?? {}).find(([k, v]) => node.labels?.[k] !== v);
    if (wrong) {
      violation(out, 1, 'NODE_SELECTOR_MISMATCH', `job ${job.id} selects nodes labelled ${wrong[0]}=${wrong[1]} but replica ${p.replica} is on ${node.name}, which is not`, job.id);
      return;
    }
  }
  const effective = tpuShape !== undefined ? 'domain' : level;
  if (effective === 'none') return;
  // A multi-role gang keeps its accelerator roles in one group; its roles without accelerators go anywhere (roles.ts).
  const grouped = isMultiRole(job) && a.placement.some((p) => p.accelerators > 0) ? a.placement.filter((p) => p.accelerators > 0) : a.placement;
  let first: string | undefined;
  for (const p of grouped) {
    const node = ix.nodes.get(p.node);
    if (!node) continue;
    const value = node.topology[effective];
    if (value === undefined) {
      violation(out, 1, 'TOPOLOGY_BROKEN', `job ${job.id} needs one ${effective} but node ${node.name} has no ${effective} label`, job.id);
      return;
    }
    if (tpuShape !== undefined && node.topology.tpuShape !== tpuShape) {
      violation(out, 1, 'TOPOLOGY_BROKEN', `job ${job.id} needs TPU shape ${tpuShape} but node ${node.name} has shape ${node.topology.tpuShape ?? 'none'}`, job.id);
      return;
    }
    if (first === undefined) first = value;
    else if (value !== first) {
      violation(out, 1, 'TOPOLOGY_BROKEN', `job ${job.id} needs one ${effective} but spans ${first} and ${value}`, job.id);
      return;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Rule 1: node capacity after the cycle, on nodes that received replicas
// ---------------------------------------------------------------------------------------------

interface Load {
  accelerators: number;
  cpuMillis: number;
  memoryMiB: number;
  added: number;
  jobs: string[];
}

function checkNodeCapacity(ix: SnapshotIndex, result: CycleResult, victims: Map<string, RunningJob>, out: Violation[]): void {
  const touched = new Map<string, Load>();
  for (const a of result.admissions) {
    for (const p of a.placement) {
      let load = touched.get(p.node);
      if (!load) {
        load = { accelerators: 0, cpuMillis: 0, memoryMiB: 0, added: 0, jobs: [] };
        touched.set(p.node, load);
      }
      load.accelerators += p.accelerators;
      load.cpuMillis += p.cpuMillis;
      load.memoryMiB += p.memoryMiB;
      load.added += p.accelerators;
      if (!load.jobs.includes(a.jobId)) load.jobs.push(a.jobId);
    }
  }
  if (touched.size === 0) return;
  for (const job of ix.snapshot.running) {
    if (victims.has(job.id)) continue;
    for (const p of job.placement) {
      const load = touched.get(p.node);
      if (!load) continue;
      load.accelerators += p.accelerators;
      load.cpuMillis += p.cpuMillis;
      load.memoryMiB += p.memoryMiB;
    }
  }
  for (const [name, load] of touched) {
    const node = ix.nodes.get(name);
    if (!node) continue; // reported as NODE_UNKNOWN
    const ext = node.external ?? { accelerators: 0, cpuMillis: 0, memoryMiB: 0 };
    const dims: [string, number, number, number][] = [
      ['accelerators', load.accelerators, ext.accelerators, node.accelerators],
      ['CPU millis', load.cpuMillis, ext.cpuMillis, node.cpuMillis],
      ['memory MiB', load.memoryMiB, ext.memoryMiB, node.memoryMiB],
    ];
    for (const [dim, used, external, allocatable] of dims) {
      if (used + external > allocatable) {
        violation(
          out, 1, 'NODE_OVERCOMMITTED',
          `node ${name} holds ${used + external} ${dim} of ${allocatable} allocatable after the cycle ` +
            `(${external} external, ${load.added} accelerators newly placed by ${load.jobs.join(', ')})`,
          load.jobs[0],
        );
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Rule 3: team and cohort quota after the cycle
// ---------------------------------------------------------------------------------------------

function admissionAccelerators(a: Admission): number {
  return acceleratorsOf(a);
}

function checkQuotas(ix: SnapshotIndex, result: CycleResult, victims: Map<string, RunningJob>, out: Violation[]): void {
  const post = new Map(ix.usage);
  for (const v of victims.values()) add(post, key(v.team, v.flavor), -acceleratorsOf(v));
  /** team\0flavor → first admitted job id there. */
  const admittedAt = new Map<string, string>();
  for (const a of result.admissions) {
    const k = key(a.team, a.flavor);
    add(post, k, admissionAccelerators(a));
    if (!admittedAt.has(k)) admittedAt.set(k, a.jobId);
    const total = admissionAccelerators(a);
    if (a.borrowed < 0 || a.borrowed > total) {
      violation(out, 3, 'BORROWED_FIELD', `admission of ${a.jobId} reports ${a.borrowed} borrowed of ${total} accelerators`, a.jobId);
    }
    const team = ix.teams.get(a.team);
    if (team && team.cohort === null && a.borrowed > 0) {
      violation(out, 3, 'BORROWED_FIELD', `admission of ${a.jobId} reports ${a.borrowed} borrowed but team ${a.team} has no cohort`, a.jobId);
    }
  }

  // Team × flavor ceilings.
  const cohortFlavors = new Set<string>();
  for (const [k, jobId] of admittedAt) {
    const [teamName = '', flavor = ''] = k.split('\u0000');
    const team = ix.teams.get(teamName);
    const quota = ix.quotas.get(k);
    const used = post.get(k) ?? 0;
    if (!quota || !team) {
      violation(out, 3, 'NO_QUOTA', `team ${teamName} has no quota for ${flavor} (or does not exist) but job ${jobId} was admitted on it`, jobId);
      continue;
    }
    const borrowable = team.cohort === null ? 0 : (quota.borrowingLimit ?? Infinity);
    const ceiling = quota.nominal + borrowable;
    if (used > ceiling) {
      const limit = team.cohort === null ? 'no cohort, so no borrowing' : `borrowingLimit ${quota.borrowingLimit ?? 'none'}`;
      violation(out, 3, 'TEAM_OVER_QUOTA', `team ${teamName} uses ${used} ${flavor} after admitting ${jobId}; ceiling is ${ceiling} (nominal ${quota.nominal}, ${limit})`, jobId);
    }
    if (team.cohort !== null) cohortFlavors.add(key(team.cohort, flavor));
  }

  // Cohort × flavor: Σ borrowed ≤ Σ lendable idle, Σ usage ≤ Σ nominal.
  for (const ck of cohortFlavors) {
    const [cohort = '', flavor = ''] = ck.split('\u0000');
    const members = ix.cohortMembers.get(cohort) ?? [];
    const before = cohortLedger(ix, members, flavor, ix.usage);
    const after = cohortLedger(ix, members, flavor, post);
    const excessBefore = before.borrowed - before.lendable;
    const excessAfter = after.borrowed - after.lendable;
    let borrowerAdmitted: string | undefined;
    for (const m of members) {
      const k = key(m.name, flavor);
      const jobId = admittedAt.get(k);
      if (jobId !== undefined && (post.get(k) ?? 0) > (ix.quotas.get(k)?.nominal ?? 0)) {
        borrowerAdmitted = jobId;
        break;
      }
    }
    const worse = excessAfter > excessBefore;
    if (excessAfter > 0 && (worse || borrowerAdmitted !== undefined)) {
      violation(
        out, 3, 'COHORT_OVERLENT',
        `cohort ${cohort} ${flavor}: members borrow ${after.borrowed} but only ${after.lendable} idle nominal may be lent ` +
          `(before the cycle: ${before.borrowed} of ${before.lendable})` +
          (borrowerAdmitted !== undefined ? `; ${borrowerAdmitted} was admitted by a borrowing team` : ''),
        borrowerAdmitted,
      );
    }
    if (after.used > after.nominal && (worse || borrowerAdmitted !== undefined)) {
      violation(
        out, 3, 'COHORT_OVER_CAPACITY',
        `cohort ${cohort} uses ${after.used} ${flavor} after the cycle but its members' nominal quotas sum to ${after.nominal}`,
        borrowerAdmitted,
      );
    }
  }
}

/**
 * CPU and memory caps (Quota.cpuMillisLimit / memoryMiBLimit): a team that admitted work on a flavor holds no
 * more of either there than its cap, unless it already did before the cycle and holds no more than then.
 */
function checkResourceCaps(ix: SnapshotIndex, result: CycleResult, victims: Map<string, RunningJob>, out: Violation[]): void {
  const sum = (ps: readonly ReplicaPlacement[]): [number, number] => ps.reduce<[number, number]>(([c, m], p) => [c + p.cpuMillis, m + p.memoryMiB], [0, 0]);
  const before = new Map<string, [number, number]>();
  for (const r of ix.snapshot.running) {
    const [c, m] = sum(r.placement);
    const b = before.get(key(r.team, r.flavor)) ?? [0, 0];
    before.set(key(r.team, r.flavor), [b[0] + c, b[1] + m]);
  }
  const after = new Map(before);
  for (const v of victims.values()) {
    const [c, m] = sum(v.placement);
    const b = after.get(key(v.team, v.flavor)) ?? [0, 0];
    after.set(key(v.team, v.flavor), [b[0] - c, b[1] - m]);
  }
  const admittedAt = new Map<string, string>();
  for (const a of result.admissions) {
    const k = key(a.team, a.flavor);
    const [c, m] = sum(a.placement);
    const b = after.get(k) ?? [0, 0];
    after.set(k, [b[0] + c, b[1] + m]);
    if (!admittedAt.has(k)) admittedAt.set(k, a.jobId);
  }
  for (const [k, jobId] of admittedAt) {
    const q = ix.quotas.get(k);
    if (q === undefined) continue;
    const [c, m] = after.get(k) ?? [0, 0];
    const [c0, m0] = before.get(k) ?? [0, 0];
    const caps: [string, number, number, number | null | undefined][] = [
      ['CPU millicores', c, c0, q.cpuMillisLimit],
      ['memory MiB', m, m0, q.memoryMiBLimit],
    ];
    for (const [what, used, usedBefore, limit] of caps) {
      if (limit === null || limit === undefined || used <= limit || used <= usedBefore) continue;
      violation(out, 3, 'TEAM_OVER_QUOTA', `team ${q.team} holds ${used} ${what} on ${q.flavor} after admitting ${jobId}; its limit is ${limit}`, jobId);
    }
  }
}

interface Ledger {
  used: number;
  nominal: number;
  borrowed: number;
  lendable: number;
}

function cohortLedger(ix: SnapshotIndex, members: readonly Team[], flavor: string, usage: ReadonlyMap<string, number>): Ledger {
  const l: Ledger = { used: 0, nominal: 0, borrowed: 0, lendable: 0 };
  for (const m of members) {
    const k = key(m.name, flavor);
    const u = usage.get(k) ?? 0;
    const q = ix.quotas.get(k);
    const nominal = q?.nominal ?? 0;
    const lendingLimit = q ? (q.lendingLimit ?? nominal) : 0;
    l.used += u;
    l.nominal += nominal;
    if (u > nominal) l.borrowed += u - nominal;
    else l.lendable += Math.min(lendingLimit, nominal - u);
  }
  return l;
}

// ---------------------------------------------------------------------------------------------
// Rules 4 and 5: each preemption is allowed, replayed in the order decisions were made
// ---------------------------------------------------------------------------------------------

function checkPreemptionLegality(ix: SnapshotIndex, result: CycleResult, context: InvariantContext, out: Violation[]): void {
  if (result.preemptions.length === 0) return;
  const { options, now } = ix.snapshot;
  if (!options.preemption) {
    violation(out, 4, 'PREEMPTION_DISABLED', `${result.preemptions.length} preemption(s) although options.preemption is false`);
  }
  const byPreemptor = new Map<string, Preemption[]>();
  for (const p of result.preemptions) {
    const list = byPreemptor.get(p.preemptorJobId);
    if (list) list.push(p);
    else byPreemptor.set(p.preemptorJobId, [p]);
  }
  const live = new Map(ix.usage);
  const removed = new Set<string>();
  const minRuntimeMs = options.minRuntimeBeforePreemptionSeconds * 1000;

  const judge = (p: Preemption, a: Admission | undefined): boolean => {
    const victim = ix.running.get(p.victimJobId);
    const preemptor = ix.pending.get(p.preemptorJobId);
    if (!victim || !preemptor || removed.has(victim.id)) return false;
    removed.add(victim.id);
    const v = victim.id;
    const by = `${preemptor.id} (team ${preemptor.team}, priority ${preemptor.priority})`;
    if (!victim.preemptible) {
      violation(out, 4, 'VICTIM_NOT_PREEMPTIBLE', `non-preemptible job ${v} was preempted by ${by}`, v);
    }
    if (now - victim.admittedAt < minRuntimeMs) {
      violation(out, 4, 'MIN_RUNTIME', `job ${v} was preempted ${Math.round((now - victim.admittedAt) / 1000)} s after admission; the minimum is ${options.minRuntimeBeforePreemptionSeconds} s`, v);
    }
    const earlierPreemptorOfPreemptor = context.preemptedBy?.get(preemptor.id);
    if (earlierPreemptorOfPreemptor === v || victim.preempted?.includes(preemptor.id) === true) {
      violation(out, 5, 'PREEMPTION_CYCLE', `job ${preemptor.id} preempts ${v}, which earlier preempted it`, v);
    }
    if (a && victim.flavor !== a.flavor) {
      violation(out, 4, 'VICTIM_WRONG_FLAVOR', `job ${v} on ${victim.flavor} was preempted for ${preemptor.id}, admitted on ${a.flavor}`, v);
    }
    const sameTeam = victim.team === preemptor.team;
    const wantKind = sameTeam ? 'WithinTeam' : 'ReclaimWithinCohort';
    if (p.kind !== wantKind) {
      violation(out, 4, 'PREEMPTION_KIND', `preemption of ${v} by ${preemptor.id} is reported as ${p.kind} but is ${wantKind}`, v);
    }
    const team = ix.teams.get(preemptor.team);
    const vk = key(victim.team, victim.flavor);
    const usedBefore = live.get(vk) ?? 0;
    add(live, vk, -acceleratorsOf(victim));
    if (!team) return !sameTeam;
    if (sameTeam) {
      const policy = team.preemption.withinTeam;
      const lower = victim.priority < preemptor.priority;
      const newerEqual =
        victim.priority === preemptor.priority &&
        (victim.submittedAt > preemptor.submittedAt || (victim.submittedAt === preemptor.submittedAt && victim.id > preemptor.id));
      const allowed = policy === 'LowerPriority' ? lower : policy === 'LowerOrNewerEqualPriority' ? lower || newerEqual : false;
      if (!allowed) {
        violation(
          out, 4, 'WITHIN_TEAM_POLICY',
          `job ${v} (priority ${victim.priority}, submitted ${victim.submittedAt}) was preempted by ${by}, submitted ${preemptor.submittedAt}; team policy is ${policy}`,
          v,
        );
      }
      return false;
    }
    const victimTeam = ix.teams.get(victim.team);
    if (team.cohort === null || victimTeam?.cohort !== team.cohort) {
      violation(out, 4, 'RECLAIM_POLICY', `job ${v} of team ${victim.team} was preempted by ${by}, which is not in the same cohort`, v);
    }
    const policy = team.preemption.reclaimWithinCohort;
    const allowed = policy === 'Any' || (policy === 'LowerPriority' && victim.priority < preemptor.priority);
    if (!allowed) {
      violation(out, 4, 'RECLAIM_POLICY', `job ${v} (priority ${victim.priority}) of team ${victim.team} was preempted by ${by}; reclaim policy of ${preemptor.team} is ${policy}`, v);
    }
    const nominal = ix.quotas.get(vk)?.nominal ?? 0;
    if (usedBefore <= nominal) {
      violation(
        out, 4, 'VICTIM_NOT_BORROWING',
        `job ${v} of team ${victim.team} was preempted by ${by} although ${victim.team} was within its nominal ${victim.flavor} quota (${usedBefore} of ${nominal})`,
        v,
      );
    }
    return true;
  };

  for (const a of result.admissions) {
    let reclaimed = false;
    for (const p of byPreemptor.get(a.jobId) ?? []) reclaimed = judge(p, a) || reclaimed;
    const k = key(a.team, a.flavor);
    add(live, k, admissionAccelerators(a));
    if (reclaimed) {
      const used = live.get(k) ?? 0;
      const nominal = ix.quotas.get(k)?.nominal ?? 0;
      if (used > nominal) {
        violation(out, 4, 'PREEMPTOR_BORROWS', `team ${a.team} reclaimed ${a.flavor} for ${a.jobId} but then uses ${used}, above its nominal ${nominal}`, a.jobId);
      }
    }
  }
  // Preemptions whose preemptor was not admitted (already reported as unlinked): still judge the policy.
  for (const p of result.preemptions) if (!removed.has(p.victimJobId)) judge(p, undefined);
}

// ---------------------------------------------------------------------------------------------
// Rule 7: pending accounting, reservations, stats
// ---------------------------------------------------------------------------------------------

function checkPendingAccounting(ix: SnapshotIndex, result: CycleResult, admitted: Map<string, Admission>, out: Violation[]): void {
  const listed = new Set<string>();
  result.pending.forEach((r, i) => {
    if (!ix.pending.has(r.jobId)) {
      violation(out, 7, 'UNKNOWN_JOB', `pending reason for ${r.jobId}, which is not a pending job of the snapshot`, r.jobId);
    }
    if (listed.has(r.jobId)) violation(out, 7, 'PENDING_TWICE', `job ${r.jobId} has more than one pending reason`, r.jobId);
    listed.add(r.jobId);
    if (admitted.has(r.jobId)) violation(out, 7, 'PENDING_AND_ADMITTED', `job ${r.jobId} is both admitted and left pending (${r.code})`, r.jobId);
    if (r.position !== i + 1) violation(out, 7, 'PENDING_POSITION', `job ${r.jobId} is listed ${i + 1}. but reports position ${r.position}`, r.jobId);
  });
  for (const job of ix.snapshot.pending) {
    if (!admitted.has(job.id) && !listed.has(job.id)) {
      violation(out, 7, 'PENDING_MISSING', `pending job ${job.id} is neither admitted nor given a pending reason`, job.id);
    }
  }
  const reserved = new Set<string>();
  for (const r of result.reservations) {
    if (!ix.pending.has(r.jobId) || admitted.has(r.jobId) || reserved.has(r.jobId)) {
      violation(out, 7, 'RESERVATION_INVALID', `reservation for ${r.jobId}, which is not a job left pending (or is reserved twice)`, r.jobId);
    }
    reserved.add(r.jobId);
    for (const n of r.nodes) {
      const node = ix.nodes.get(n.node);
      if (!node || node.flavor !== r.flavor) {
        violation(out, 7, 'RESERVATION_INVALID', `reservation for ${r.jobId} holds node ${n.node}, which is not a ${r.flavor} node`, r.jobId);
      }
    }
  }
  const { stats } = result;
  const counts: [string, number, number][] = [
    ['admitted', stats.admitted, result.admissions.length],
    ['preempted', stats.preempted, result.preemptions.length],
    ['reserved', stats.reserved, result.reservations.length],
  ];
  for (const [name, got, want] of counts) {
    if (got !== want) violation(out, 7, 'STATS_MISMATCH', `stats.${name} is ${got} but the result lists ${want}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Rule 5: every victim was needed by the admission it was preempted for
// ---------------------------------------------------------------------------------------------

interface Resources {
  accelerators: number;
  cpuMillis: number;
  memoryMiB: number;
}

/**
 * Replays the admissions in order. Right after admission k (its victims removed, its replicas placed),
 * each of its victims is put back: if every node it held still has room, its team stays within its
 * ceiling and its cohort within its lending (reservations count as holding both their nodes' accelerators
 * and their team's quota), the victim was not
 * needed — the set was not the cheapest sufficient one. Later admissions are not taken into account,
 * so a victim that only a later preemption made unnecessary is not reported.
 */
function checkVictimsNeeded(ix: SnapshotIndex, result: CycleResult, victims: Map<string, RunningJob>, out: Violation[]): void {
  if (victims.size === 0) return;
  const byPreemptor = new Map<string, RunningJob[]>();
  for (const p of result.preemptions) {
    const v = victims.get(p.victimJobId);
    if (!v) continue;
    const list = byPreemptor.get(p.preemptorJobId);
    if (list) list.push(v);
    else byPreemptor.set(p.preemptorJobId, [v]);
  }
  // Load of every node a victim occupies: external + reservations + everything running before the cycle.
  const load = new Map<string, Resources>();
  for (const v of victims.values()) {
    for (const p of v.placement) {
      const ext = ix.nodes.get(p.node)?.external;
      load.set(p.node, { accelerators: ext?.accelerators ?? 0, cpuMillis: ext?.cpuMillis ?? 0, memoryMiB: ext?.memoryMiB ?? 0 });
    }
  }
  const charge = (p: { node: string } & Resources, sign: number): void => {
    const l = load.get(p.node);
    if (!l) return;
    l.accelerators += sign * p.accelerators;
    l.cpuMillis += sign * p.cpuMillis;
    l.memoryMiB += sign * p.memoryMiB;
  };
  for (const j of ix.snapshot.running) for (const p of j.placement) charge(p, 1);
  for (const r of result.reservations) for (const n of r.nodes) charge({ node: n.node, accelerators: n.accelerators, cpuMillis: 0, memoryMiB: 0 }, 1);
  // Reservations hold quota as well as nodes: count them as used by the reserving job's team.
  const live = new Map(ix.usage);
  for (const r of result.reservations) {
    const team = ix.pending.get(r.jobId)?.team;
    if (team !== undefined) add(live, key(team, r.flavor), r.nodes.reduce((sum, n) => sum + n.accelerators, 0));
  }

  // CPU and memory each team holds per flavor (its caps, Quota.cpuMillisLimit / memoryMiBLimit).
  const held = new Map<string, Resources>();
  const hold = (team: string, flavor: string, ps: readonly ({ node: string } & Resources)[], sign: number): void => {
    const h = held.get(key(team, flavor)) ?? { accelerators: 0, cpuMillis: 0, memoryMiB: 0 };
    for (const p of ps) {
      h.cpuMillis += sign * p.cpuMillis;
      h.memoryMiB += sign * p.memoryMiB;
    }
    held.set(key(team, flavor), h);
  };
  for (const j of ix.snapshot.running) hold(j.team, j.flavor, j.placement, 1);

  for (const a of result.admissions) {
    const mine = byPreemptor.get(a.jobId) ?? [];
    for (const v of mine) {
      for (const p of v.placement) charge(p, -1);
      add(live, key(v.team, v.flavor), -acceleratorsOf(v));
      hold(v.team, v.flavor, v.placement, -1);
    }
    for (const p of a.placement) charge(p, 1);
    add(live, key(a.team, a.flavor), acceleratorsOf(a));
    hold(a.team, a.flavor, a.placement, 1);
    const preemptor = ix.pending.get(a.jobId);
    for (const v of mine) {
      if (couldStay(ix, v, load, live) && !neededForNominal(ix, v, a, preemptor, live) && !neededForCaps(ix, v, held)) {
        violation(
          out, 5, 'VICTIM_UNNEEDED',
          `job ${v.id} (team ${v.team}, ${acceleratorsOf(v)} ${v.flavor}) was preempted for ${a.jobId}, but ${a.jobId} fits with it still running ` +
            `(nodes ${[...new Set(v.placement.map((p) => p.node))].join(', ')} have room and quotas allow it)`,
          v.id,
        );
      }
    }
  }
}

/** Whether running job `v` could be put back on its nodes given the current loads and usage. */
/**
 * A preemptor that may not be preempted runs only within its team's nominal quota (rule 9): a victim of its own
 * team and flavor is needed when, staying, it would leave the team above its nominal with the preemptor admitted.
 */
function neededForNominal(ix: SnapshotIndex, v: RunningJob, a: CycleResult['admissions'][number], preemptor: PendingJob | undefined, live: Map<string, number>): boolean {
  if (preemptor === undefined || preemptor.preemptible || v.team !== a.team || v.flavor !== a.flavor) return false;
  const quota = ix.quotas.get(key(a.team, a.flavor));
  return quota !== undefined && (live.get(key(a.team, a.flavor)) ?? 0) + acceleratorsOf(v) > quota.nominal;
}

/** A victim is needed when, staying, its team would hold more CPU or memory on its flavor than its caps allow. */
function neededForCaps(ix: SnapshotIndex, v: RunningJob, held: Map<string, Resources>): boolean {
  const quota = ix.quotas.get(key(v.team, v.flavor));
  const h = held.get(key(v.team, v.flavor));
  if (quota === undefined || h === undefined) return false;
  let c = h.cpuMillis;
  let m = h.memoryMiB;
  for (const p of v.placement) {
    c += p.cpuMillis;
    m += p.memoryMiB;
  }
  const over = (used: number, limit: number | null | undefined): boolean => limit !== null && limit !== undefined && used > limit;
  return over(c, quota.cpuMillisLimit) || over(m, quota.memoryMiBLimit);
}

function couldStay(ix: SnapshotIndex, v: RunningJob, load: Map<string, Resources>, live: Map<string, number>): boolean {
  const need = new Map<string, Resources>();
  for (const p of v.placement) {
    const n = need.get(p.node) ?? { accelerators: 0, cpuMillis: 0, memoryMiB: 0 };
    n.accelerators += p.accelerators;
    n.cpuMillis += p.cpuMillis;
    n.memoryMiB += p.memoryMiB;
    need.set(p.node, n);
  }
  for (const [name, n] of need) {
    const node = ix.nodes.get(name);
    const l = load.get(name)!;
    if (
      !node ||
      l.accelerators + n.accelerators > node.accelerators ||
      l.cpuMillis + n.cpuMillis > node.cpuMillis ||
      l.memoryMiB + n.memoryMiB > node.memoryMiB
    ) {
      return false;
    }
  }
  const vk = key(v.team, v.flavor);
  const team = ix.teams.get(v.team);
  const quota = ix.quotas.get(vk);
  if (!team || !quota) return false;
  const acc = acceleratorsOf(v);
  const ceiling = quota.nominal + (team.cohort === null ? 0 : (quota.borrowingLimit ?? Infinity));
  if ((live.get(vk) ?? 0) + acc > ceiling) return false;
  if (team.cohort === null) return true;
  add(live, vk, acc);
  const l = cohortLedger(ix, ix.cohortMembers.get(team.cohort) ?? [], v.flavor, live);
  add(live, vk, -acc);
  return l.borrowed <= l.lendable;
}
