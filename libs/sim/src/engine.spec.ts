import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { DEFAULT_OPTIONS, runCycle, type CycleResult, type ReplicaPlacement, type Snapshot } from '#core';
import { buildCluster } from './cluster-file.js';
import { runSimulation } from './engine.js';
import { EventQueue, type SimEvent } from './event-queue.js';
import { deriveTenancy } from './tenancy-file.js';
import type { SimInput, SimJob } from './types.js';

/**
 * These tests drive the event engine with a tiny scripted scheduler (first fit in queue order, and
 * "a higher priority job evicts the lowest-priority running job"), so that they test the engine's
 * clock, ordering and preemption bookkeeping independently of the real core's policies.
 */
function firstFit(snapshot: Snapshot): CycleResult {
  const free = new Map(snapshot.nodes.map((n) => [n.name, n.accelerators - (n.external?.accelerators ?? 0)]));
  for (const r of snapshot.running) for (const p of r.placement) free.set(p.node, free.get(p.node)! - p.accelerators);
  const result: CycleResult = { admissions: [], preemptions: [], reservations: [], pending: [], stats: { considered: 0, admitted: 0, preempted: 0, reserved: 0 } };
  const queue = [...snapshot.pending].sort((a, b) => b.priority - a.priority || a.submittedAt - b.submittedAt || (a.id < b.id ? -1 : 1));
  const running = [...snapshot.running];
  for (const job of queue) {
    const tryPlace = (): boolean => {
      const placement: ReplicaPlacement[] = [];
      const taken = new Map(free);
      for (let r = 0; r < job.replicas; r++) {
        const node = snapshot.nodes.find((n) => job.flavors.includes(n.flavor) && taken.get(n.name)! >= job.acceleratorsPerReplica);
        if (node === undefined) return false;
        taken.set(node.name, taken.get(node.name)! - job.acceleratorsPerReplica);
        placement.push({ replica: r, node: node.name, accelerators: job.acceleratorsPerReplica, cpuMillis: 0, memoryMiB: 0 });
      }
      for (const [k, v] of taken) free.set(k, v);
      result.admissions.push({ jobId: job.id, team: job.team, flavor: snapshot.nodes.find((n) => n.name === placement[0]!.node)!.flavor, replicas: job.replicas, placement, borrowed: 0, preempts: [] });
      return true;
    };
    if (tryPlace()) continue;
    const victim = running.filter((r) => r.priority < job.priority).sort((a, b) => a.priority - b.priority)[0];
    if (snapshot.options.preemption && victim !== undefined) {
      running.splice(running.indexOf(victim), 1);
      for (const p of victim.placement) free.set(p.node, free.get(p.node)! + p.accelerators);
      result.preemptions.push({ victimJobId: victim.id, victimTeam: victim.team, preemptorJobId: job.id, kind: 'WithinTeam', message: 'test' });
      if (tryPlace()) continue;
    }
    result.pending.push({ jobId: job.id, code: 'INSUFFICIENT_CAPACITY', message: 'no room', position: result.pending.length + 1, estimatedStartAt: null });
  }
  return result;
}

function job(id: string, submitSeconds: number, work: number, over: Partial<SimJob> = {}): SimJob {
  return { id, line: Number(id.replace(/\D/g, '')) || 1, source: 'test', team: 'a', submitSeconds, replicas: 1, acceleratorsPerReplica: 8, flavors: ['gpu'], work, rates: { gpu: 1 }, priority: 0, preemptible: true, ...over };
}

function input(jobs: SimJob[], nodes = 1, cfg: Partial<SimInput['config']> = {}): SimInput {
  const cluster = buildCluster([{ name: 'gpu', kind: 'nvidia-gpu', resourceName: 'nvidia.com/gpu', relativeSpeed: 1, costPerHour: 1 }], [{ flavor: 'gpu', count: nodes, acceleratorsPerNode: 8 }]);
  return {
    trace: { jobs, rejected: [] },
    cluster,
    tenancy: deriveTenancy(['a', 'b'], { a: 1, b: 1 }, cluster),
    // No restart cost (moves.restartSeconds 0) unless a test asks for one: the figures below are the runs' own.
    config: { cycleIntervalSeconds: 0, checkpointIntervalSeconds: 0, seriesBucketSeconds: 0, options: { ...DEFAULT_OPTIONS, moves: { restartSeconds: 0 } }, ...cfg },
    epochMs: 1_000_000,
  };
}

const outcome = (r: ReturnType<typeof runSimulation>, id: string) => r.jobs.find((j) => j.id === id)!;

describe('EventQueue', () => {
  it('orders by time, then completion < arrival < cycle, then job id, whatever the insertion order', () => {
    const q = new EventQueue();
    q.push({ at: 5, kind: 'cycle', jobId: '', run: 0 });
    q.push({ at: 5, kind: 'arrival', jobId: 'j2', run: 0 });
    q.push({ at: 5, kind: 'completion', jobId: 'j9', run: 1 });
    q.push({ at: 5, kind: 'arrival', jobId: 'j1', run: 0 });
    q.push({ at: 3, kind: 'cycle', jobId: '', run: 0 });
    q.push({ at: 5, kind: 'completion', jobId: 'j3', run: 1 });
    const order: string[] = [];
    for (let e = q.pop(); e !== undefined; e = q.pop()) order.push(`${e.at}:${e.kind}:${e.jobId}`);
    expect(order).toEqual(['3:cycle:', '5:completion:j3', '5:completion:j9', '5:arrival:j1', '5:arrival:j2', '5:cycle:']);
  });

  it('pops in that order whatever pushes and pops interleave (in-order pushes take its sorted run)', () => {
    const kinds = ['completion', 'arrival', 'cycle'] as const;
    const arbEvent = fc.record({ at: fc.integer({ min: 0, max: 20 }), kind: fc.constantFrom(...kinds), jobId: fc.constantFrom('', 'j1', 'j2', 'j3'), run: fc.nat(3) });
    const arbOp = fc.oneof(arbEvent, fc.constant('pop' as const));
    fc.assert(
      fc.property(fc.array(arbEvent, { maxLength: 30 }), fc.array(arbOp, { maxLength: 60 }), (preload, ops) => {
        const q = new EventQueue();
        // The reference: every queued event with its push number, the least by (at, kind, jobId, push number) popped first.
        let queued: { e: SimEvent; seq: number }[] = [];
        let seq = 0;
        const rank = { completion: 0, arrival: 1, cycle: 2 };
        const cmp = (x: { e: SimEvent; seq: number }, y: { e: SimEvent; seq: number }): number =>
          x.e.at - y.e.at || rank[x.e.kind] - rank[y.e.kind] || (x.e.jobId < y.e.jobId ? -1 : x.e.jobId > y.e.jobId ? 1 : 0) || x.seq - y.seq;
        const push = (e: SimEvent): void => {
          q.push(e);
          queued.push({ e, seq: seq++ });
        };
        [...preload].sort((x, y) => x.at - y.at).forEach(push);
        for (const op of [...ops, ...Array<'pop'>(100).fill('pop')]) {
          if (op !== 'pop') {
            push(op);
            continue;
          }
          queued = queued.sort(cmp);
          const want = queued.shift();
          expect(q.size).toBe(want === undefined ? 0 : queued.length + 1);
          const got = q.pop();
          expect(got && { at: got.at, kind: got.kind, jobId: got.jobId, run: got.run }).toEqual(want?.e);
        }
      }),
    );
  });
});

describe('runSimulation (event engine)', () => {
  it('moves the virtual clock to events only and starts jobs on the cycle grid', () => {
    const r = runSimulation(input([job('j1', 5, 100)], 1, { cycleIntervalSeconds: 10 }), firstFit);
    expect(outcome(r, 'j1')).toMatchObject({ submitSeconds: 5, firstStartSeconds: 10, endSeconds: 110 });
    expect(r.endSeconds).toBe(110);
    expect(r.cycles).toBe(1);
  });

  it('runs a cycle at the instant of a change when the interval is 0', () => {
    const r = runSimulation(input([job('j1', 5, 100)]), firstFit);
    expect(outcome(r, 'j1')).toMatchObject({ firstStartSeconds: 5, endSeconds: 105 });
  });

  it('processes a completion before an arrival at the same instant, so the arrival starts at once', () => {
    const r = runSimulation(input([job('j1', 0, 10), job('j2', 10, 10)]), firstFit);
    expect(outcome(r, 'j2')).toMatchObject({ firstStartSeconds: 10, endSeconds: 20 });
  });

  it('breaks ties between simultaneous arrivals by job id', () => {
    const r = runSimulation(input([job('j2', 0, 10), job('j1', 0, 10)]), firstFit);
    expect(outcome(r, 'j1').firstStartSeconds).toBe(0);
    expect(outcome(r, 'j2').firstStartSeconds).toBe(10);
  });

  it('scales run time by the rate of the flavor the job is placed on', () => {
    const r = runSimulation(input([job('j1', 0, 100, { rates: { gpu: 4 } })]), firstFit);
    expect(outcome(r, 'j1').endSeconds).toBe(25);
  });

  it('restarts a preempted job from scratch and ignores the completion of its evicted run', () => {
    // j1 (low priority, 100 s) runs from 0; j2 (high priority, 50 s) arrives at 30 and evicts it.
    const r = runSimulation(input([job('j1', 0, 100), job('j2', 30, 50, { priority: 10 })]), firstFit);
    expect(outcome(r, 'j2')).toMatchObject({ firstStartSeconds: 30, endSeconds: 80 });
    // j1 lost 30 s of progress: it restarts at 80 and needs the full 100 s.
    expect(outcome(r, 'j1')).toMatchObject({ firstStartSeconds: 0, endSeconds: 180, preemptions: 1, lostAcceleratorSeconds: 30 * 8 });
    expect(outcome(r, 'j1').acceleratorSeconds).toBe((30 + 100) * 8);
    expect(r.preemptionTimes).toEqual([30]);
    // No completion at 100 (stale): the allocation never drops to 0 between 0 and 180.
    expect(r.allocation.filter((p) => p.seconds > 0 && p.seconds < 180).every((p) => p.allocated === 8)).toBe(true);
  });

  it('a preempted job pays its restart (moves.restartSeconds) when it is admitted again; its first start pays none', () => {
    const jobs = [job('j1', 0, 100), job('j2', 30, 50, { priority: 10 })];
    const restarting = (restartSeconds: number): SimInput => {
      const base = input(jobs, 1, { checkpointIntervalSeconds: 20 });
      return { ...base, config: { ...base.config, options: { ...base.config.options, moves: { restartSeconds } } } };
    };
    const r = runSimulation(restarting(60), firstFit);
    // j2 starts at once (a first start), j1 is admitted again at 80 and makes progress from 140: 80 s left → 220.
    expect(outcome(r, 'j2')).toMatchObject({ firstStartSeconds: 30, endSeconds: 80 });
    expect(outcome(r, 'j1')).toMatchObject({ firstStartSeconds: 0, endSeconds: 220, preemptions: 1 });
    expect(outcome(r, 'j1').endSeconds! - outcome(runSimulation(restarting(0), firstFit), 'j1').endSeconds!).toBe(60);
  });

  it('never moves the clock to the stale completion of a preempted run that would have ended later', () => {
    // j1 starts on the slow node (100 s there; its first run would end at 100). j2 evicts it at 10;
    // j1 restarts on the fast node, free since j0 ended at 5, and ends at 21. Nothing happens after.
    const cluster = buildCluster(
      [
        { name: 'slow', kind: 'nvidia-gpu', resourceName: 'nvidia.com/gpu', relativeSpeed: 1, costPerHour: 1 },
        { name: 'fast', kind: 'nvidia-gpu', resourceName: 'nvidia.com/gpu', relativeSpeed: 10, costPerHour: 1 },
      ],
      [
        { flavor: 'slow', count: 1, acceleratorsPerNode: 8 },
        { flavor: 'fast', count: 1, acceleratorsPerNode: 8 },
      ],
    );
    const jobs = [
      job('j0', 0, 50, { flavors: ['fast'], rates: { fast: 10 } }),
      job('j1', 0, 100, { flavors: ['slow', 'fast'], rates: { slow: 1, fast: 10 } }),
      job('j2', 10, 10, { priority: 10, flavors: ['slow'], rates: { slow: 1 } }),
    ];
    // firstFit takes nodes in name order: 'fast-0' before 'slow-0', so j1 (queued behind j0) gets slow-0.
    const r = runSimulation({ ...input(jobs), cluster, tenancy: deriveTenancy(['a'], { a: 1 }, cluster) }, firstFit);
    expect(outcome(r, 'j1')).toMatchObject({ firstStartSeconds: 0, endSeconds: 21, preemptions: 1 });
    expect(outcome(r, 'j2').endSeconds).toBe(20);
    expect(r.endSeconds).toBe(21);
    expect(r.allocation[r.allocation.length - 1]).toEqual({ seconds: 21, allocated: 0 });
  });

  it('keeps the progress up to the last checkpoint when a checkpoint interval is set', () => {
    const r = runSimulation(input([job('j1', 0, 100), job('j2', 30, 50, { priority: 10 })], 1, { checkpointIntervalSeconds: 20 }), firstFit);
    // Checkpoint at 20 s: 80 s left when it restarts at 80.
    expect(outcome(r, 'j1')).toMatchObject({ endSeconds: 160, lostAcceleratorSeconds: 10 * 8 });
  });

  describe('grace periods (checkpointGraceSeconds)', () => {
    /** firstFit, with the grace period the core gives a checkpointing victim (and each admission's victims, as the core lists them). */
    const withGrace =
      (seconds: number) =>
      (snapshot: Snapshot): CycleResult => {
        const r = firstFit(snapshot);
        return {
          ...r,
          admissions: r.admissions.map((a) => ({ ...a, preempts: r.preemptions.filter((p) => p.preemptorJobId === a.jobId).map((p) => p.victimJobId) })),
          preemptions: r.preemptions.map((p) => ({ ...p, gracePeriodSeconds: seconds })),
        };
      };
    const graced = (jobs: SimJob[]) => input(jobs, 1, { checkpointIntervalSeconds: 20, checkpointGraceSeconds: 10 });

    it('a victim runs on through its grace period and checkpoints at its end; its preemptor starts then', () => {
      const r = runSimulation(graced([job('j1', 0, 100), job('j2', 30, 50, { priority: 10 })]), withGrace(10));
      // j1 runs until 40 (keeping all 40 s), j2 runs 40–90, j1 restarts at 90 with 60 s left.
      expect(outcome(r, 'j2')).toMatchObject({ firstStartSeconds: 40, endSeconds: 90 });
      expect(outcome(r, 'j1')).toMatchObject({ endSeconds: 150, preemptions: 1, lostAcceleratorSeconds: 0 });
      expect(outcome(r, 'j1').acceleratorSeconds).toBe((40 + 60) * 8);
      // Without a grace period it loses the 10 s since its checkpoint at 20.
      const none = runSimulation(input([job('j1', 0, 100), job('j2', 30, 50, { priority: 10 })], 1, { checkpointIntervalSeconds: 20 }), withGrace(10));
      expect(outcome(none, 'j1')).toMatchObject({ endSeconds: 160, lostAcceleratorSeconds: 10 * 8 });
    });

    it('what a victim holds through its grace period goes to nobody before it ends, in its cycle or a later one', () => {
      // j1 holds the node's 8 until 40 (preempted at 30, grace 10): j2 (its preemptor, 1) and j3 (4), placed in the
      // same cycle on what the core counts as released, start at 40; j4 (2), arriving at 35, finds the 3 left
      // still held and starts at 40 too.
      const jobs = [
        job('j1', 0, 100),
        job('j2', 30, 50, { priority: 10, acceleratorsPerReplica: 1 }),
        job('j3', 30, 50, { priority: 5, acceleratorsPerReplica: 4 }),
        job('j4', 35, 50, { acceleratorsPerReplica: 2 }),
      ];
      const r = runSimulation(graced(jobs), withGrace(10));
      expect(['j2', 'j3', 'j4'].map((id) => outcome(r, id).firstStartSeconds)).toEqual([40, 40, 40]);
      expect(outcome(r, 'j1')).toMatchObject({ preemptions: 1, lostAcceleratorSeconds: 0 });
    });

    it('a victim whose work ends within its grace period completes, and its preemptor starts when it ends', () => {
      const r = runSimulation(graced([job('j1', 0, 35), job('j2', 30, 50, { priority: 10 })]), withGrace(10));
      expect(outcome(r, 'j1')).toMatchObject({ endSeconds: 35, preemptions: 0, lostAcceleratorSeconds: 0 });
      expect(outcome(r, 'j2')).toMatchObject({ firstStartSeconds: 35, endSeconds: 85 });
    });
  });

  it('rejects a gang larger than the cluster with its line, and an unknown flavor, instead of dropping them', () => {
    const r = runSimulation(
      input([job('j1', 0, 10), job('j7', 0, 10, { replicas: 3, line: 7 }), job('j8', 0, 10, { flavors: ['tpu'], line: 8 })], 2),
      firstFit,
    );
    expect(r.rejected).toEqual([
      { line: 7, source: 'test', reason: 'gang of 3 × 8 = 24 accelerators is larger than the cluster (gpu: 16 accelerators, room for 2 replicas)' },
      { line: 8, source: 'test', reason: "unknown flavor 'tpu' (cluster has gpu)" },
    ]);
    expect(r.jobs.map((j) => j.id)).toEqual(['j1']);
  });

  it('runs another cycle a grid step later for jobs held back by the per-team admission limit', () => {
    // A core that admits one job per cycle and holds the rest back with ADMISSION_LIMIT.
    const onePerCycle = (s: Snapshot): CycleResult => {
      const r = firstFit({ ...s, pending: s.pending.slice(0, 1) });
      r.pending.push(...s.pending.slice(1).map((p, i) => ({ jobId: p.id, code: 'ADMISSION_LIMIT' as const, message: 'limit', position: i + 1, estimatedStartAt: null })));
      return r;
    };
    const jobs = [job('j1', 0, 100, { acceleratorsPerReplica: 1 }), job('j2', 0, 100, { acceleratorsPerReplica: 1 }), job('j3', 0, 100, { acceleratorsPerReplica: 1 })];
    const r = runSimulation(input(jobs, 1, { cycleIntervalSeconds: 10 }), onePerCycle);
    expect(['j1', 'j2', 'j3'].map((id) => outcome(r, id).firstStartSeconds)).toEqual([0, 10, 20]);
  });

  it('reports jobs the core never admits as unfinished with its last reason', () => {
    const never = (s: Snapshot): CycleResult => ({
      admissions: [],
      preemptions: [],
      reservations: [],
      pending: s.pending.map((p, i) => ({ jobId: p.id, code: 'QUOTA_EXCEEDED', message: 'no quota left', position: i + 1, estimatedStartAt: null })),
      stats: { considered: s.pending.length, admitted: 0, preempted: 0, reserved: 0 },
    });
    const r = runSimulation(input([job('j1', 0, 10)]), never);
    expect(r.unfinished).toEqual([{ id: 'j1', line: 1, team: 'a', reason: 'QUOTA_EXCEEDED: no quota left' }]);
  });
});

describe('checkpoint-aware preemption (with the real core)', () => {
  it('evicts the job that loses least since its last checkpoint, and it resumes from there', () => {
    // Checkpoints every 100 s. a runs from 0 (checkpointed at 200), b from 150 (no checkpoint yet). At 230 an
    // urgent job needs one node: a loses 30 s × 8, b would lose 80 s × 8 (the most recently started).
    const jobs = [job('j1', 0, 1000), job('j2', 150, 1000), job('j3', 230, 100, { priority: 10 })];
    const r = runSimulation(input(jobs, 2, { checkpointIntervalSeconds: 100 }), runCycle);
    expect(outcome(r, 'j1')).toMatchObject({ preemptions: 1, lostAcceleratorSeconds: 240 });
    expect(outcome(r, 'j2')).toMatchObject({ preemptions: 0, lostAcceleratorSeconds: 0, endSeconds: 1150 });
    // j1 resumes at 330 (when j3 ends) with 800 s of work left.
    expect(outcome(r, 'j1').endSeconds).toBe(1130);
  });

  it('starts from a state: a job running at the start holds its nodes from 0 until its remaining work is done; one submitted earlier waits from 0 and keeps its submission time', () => {
    const r = runSimulation(
      input([job('j1', -7200, 3600, { runningAtStart: { flavor: 'gpu', startSeconds: -3600 } }), job('j2', -600, 100), job('j3', 0, 100)]),
      firstFit,
    );
    expect(outcome(r, 'j1')).toMatchObject({ firstStartSeconds: -3600, endSeconds: 3600, acceleratorSeconds: 3600 * 8 });
    // j2 waited since -600 s, j3 since 0: both wait for j1's node, then run in id order.
    expect(outcome(r, 'j2')).toMatchObject({ submitSeconds: -600, firstStartSeconds: 3600, endSeconds: 3700 });
    expect(outcome(r, 'j3')).toMatchObject({ firstStartSeconds: 3700, endSeconds: 3800 });
    expect(r.allocation[0]).toEqual({ seconds: 0, allocated: 8 });
  });

  it('queues a job running at the start that no longer fits the fleet', () => {
    const r = runSimulation(
      input([job('j1', -100, 50, { runningAtStart: { flavor: 'gpu', startSeconds: -50 } }), job('j2', -100, 50, { runningAtStart: { flavor: 'gpu', startSeconds: -50 } })]),
      firstFit,
    );
    expect(outcome(r, 'j1')).toMatchObject({ firstStartSeconds: -50, endSeconds: 50 });
    expect(outcome(r, 'j2')).toMatchObject({ firstStartSeconds: 50, endSeconds: 100 });
  });
});

describe('moves (with the real core)', () => {
  /** One fast and one slow 8-GPU node; a job 10× faster on the fast one. */
  function hetero(checkpointIntervalSeconds: number): SimInput {
    const flavors = [
      { name: 'fast', kind: 'nvidia-gpu' as const, resourceName: 'nvidia.com/gpu', relativeSpeed: 1, costPerHour: 1 },
      { name: 'slow', kind: 'nvidia-gpu' as const, resourceName: 'nvidia.com/gpu', relativeSpeed: 0.1, costPerHour: 1 },
    ];
    const cluster = buildCluster(flavors, [{ flavor: 'fast', count: 1, acceleratorsPerNode: 8 }, { flavor: 'slow', count: 1, acceleratorsPerNode: 8 }]);
    // `blocker` holds the fast node for 950 h; `mover` (100 h on the fast node, 1,000 h on the slow one) starts on
    // the slow node (sooner than waiting), and moves to the fast one when the blocker ends with nothing pending.
    const jobs = [
      job('j1-blocker', 0, 950 * 3600, { flavors: ['fast'], rates: { fast: 1 } }),
      job('j2-mover', 1, 3_600_000, { flavors: ['fast', 'slow'], rates: { fast: 10, slow: 1 } }),
    ];
    return { ...input(jobs), cluster, tenancy: deriveTenancy(['a'], { a: 1 }, cluster), config: { ...input(jobs).config, cycleIntervalSeconds: 10, checkpointIntervalSeconds } };
  }

  it('a job that checkpoints moves to the faster flavor once it frees, though nothing is pending, and finishes sooner', () => {
    const moved = runSimulation(hetero(1800), runCycle).jobs.find((j) => j.id === 'j2-mover')!;
    expect([moved.moves, moved.preemptions, moved.flavor]).toEqual([1, 0, 'fast']);
    // 950 h on the slow node (95 % of its work, checkpointed), then the last 5 % in 5 h on the fast one.
    expect(moved.endSeconds!).toBeLessThan(960 * 3600);
    const stayed = runSimulation(hetero(0), runCycle).jobs.find((j) => j.id === 'j2-mover')!;
    expect([stayed.moves, stayed.flavor]).toEqual([0, 'slow']);
    expect(stayed.endSeconds!).toBeGreaterThanOrEqual(1000 * 3600);
  });

  it('a moved job pays its restart (moves.restartSeconds) before it makes progress again, as the core estimated', () => {
    const withRestart = (restartSeconds: number): SimInput => {
      const base = hetero(1800);
      return { ...base, config: { ...base.config, options: { ...base.config.options, moves: { restartSeconds } } } };
    };
    const quick = runSimulation(withRestart(0), runCycle).jobs.find((j) => j.id === 'j2-mover')!;
    const slow = runSimulation(withRestart(3600), runCycle).jobs.find((j) => j.id === 'j2-mover')!;
    expect([quick.moves, slow.moves]).toEqual([1, 1]);
    expect(slow.endSeconds! - quick.endSeconds!).toBe(3600);
  });
});
