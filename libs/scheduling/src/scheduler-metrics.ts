import { Counter, Gauge, Histogram, register as globalRegistry, type Registry } from 'prom-client';
import type { Snapshot } from '#core';
import { InvariantViolationError, type CycleObserver, type CyclePhase, type CycleReport } from './cycle-runner.js';
import type { SideEffectObserver } from './side-effect-worker.js';

/** Job counts by state, team and flavor (from the database, refreshed periodically by the leader). */
export interface JobStateCount {
  state: string;
  team: string;
  /** Admitted flavor, or the first acceptable flavor of a pending job. */
  flavor: string;
  count: number;
}

/**
 * Prometheus metrics of the scheduler and the side-effect workers (prom-client). Registered on the
 * global registry by default, so the API's /metrics shows them too when everything runs in one process.
 */
export class SchedulerMetrics implements CycleObserver, SideEffectObserver {
  readonly jobs: Gauge<'state' | 'team' | 'flavor'>;
  readonly admissionLatency: Histogram<'team' | 'flavor'>;
  readonly cyclePhase: Histogram<'phase'>;
  readonly cycleFailures: Counter<'phase'>;
  readonly invariantViolations: Counter<'rule' | 'code'>;
  readonly decisions: Counter<'kind'>;
  readonly accelerators: Gauge<'kind' | 'flavor' | 'team'>;
  readonly preemptions: Counter<'kind'>;
  readonly reservations: Gauge;
  readonly sideEffects: Counter<'kind' | 'outcome'>;
  readonly leader: Gauge;
  readonly lastCycleTimestamp: Gauge;
  readonly requeues: Counter<'reason'>;
  readonly snapshotReads: Counter<'kind'>;
  readonly snapshotMismatches: Counter;

  constructor(registry: Registry = globalRegistry) {
    const registers = [registry];
    const gauge = <L extends string>(name: string, help: string, labelNames: L[]): Gauge<L> =>
      (registry.getSingleMetric(name) as Gauge<L> | undefined) ?? new Gauge<L>({ name, help, labelNames, registers });
    const counter = <L extends string>(name: string, help: string, labelNames: L[]): Counter<L> =>
      (registry.getSingleMetric(name) as Counter<L> | undefined) ?? new Counter<L>({ name, help, labelNames, registers });
    const histogram = <L extends string>(name: string, help: string, labelNames: L[], buckets: number[]): Histogram<L> =>
      (registry.getSingleMetric(name) as Histogram<L> | undefined) ?? new Histogram<L>({ name, help, labelNames, buckets, registers });

    this.jobs = gauge('qm_jobs', 'Jobs by state (PENDING, ADMITTED, BINDING, RUNNING), team and flavor', ['state', 'team', 'flavor']);
    this.admissionLatency = histogram(
      'qm_admission_latency_seconds',
      'Time from submission (or requeue) to admission',
      ['team', 'flavor'],
      [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 14400, 86400],
    );
    this.cyclePhase = histogram('qm_scheduler_cycle_phase_seconds', 'Duration of each phase of a scheduling cycle (lock, snapshot, schedule, check, commit, total)', ['phase'], [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]);
    this.cycleFailures = counter('qm_scheduler_cycle_failures_total', 'Cycles that failed, by the phase they failed in', ['phase']);
    this.invariantViolations = counter(
      'qm_scheduler_invariant_violations_total',
      'Rule violations the guard found in a cycle\'s decisions before commit (the cycle was aborted), by rule and code',
      ['rule', 'code'],
    );
    this.decisions = counter('qm_scheduler_decisions_total', 'Decisions committed, by kind (admitted, preempted, budget-stopped, reserved, pending)', ['kind']);
    this.accelerators = gauge('qm_accelerators', 'Accelerators by kind (total, allocated, borrowed), flavor and team (total: team="")', ['kind', 'flavor', 'team']);
    this.preemptions = counter('qm_preemptions_total', 'Preempted gangs, by preemption kind', ['kind']);
    this.reservations = gauge('qm_reservations', 'Reservations held by the last cycle', []);
    this.sideEffects = counter('qm_side_effects_total', 'Side-effect attempts by kind and outcome (done, retry, failed)', ['kind', 'outcome']);
    this.leader = gauge('qm_scheduler_leader', '1 when this process holds the scheduler lease', []);
    this.lastCycleTimestamp = gauge('qm_scheduler_last_cycle_timestamp_seconds', 'When the last committed cycle started', []);
    this.requeues = counter('qm_requeues_total', 'Admitted jobs put back in the queue, by reason', ['reason']);
    this.snapshotReads = counter('qm_scheduler_snapshot_reads_total', 'Snapshot reads by kind (full, incremental, checked: both compared)', ['kind']);
    this.snapshotMismatches = counter(
      'qm_scheduler_snapshot_mismatches_total',
      'Checked snapshot reads whose incremental state differed from the full read (the full read was used)',
      [],
    );
  }

  /** A cycle's snapshot read (PgCycleStore). */
  onSnapshotRead(read: { kind: string; mismatches?: readonly string[] }): void {
    this.snapshotReads.inc({ kind: read.kind });
    if (read.mismatches && read.mismatches.length > 0) this.snapshotMismatches.inc();
  }

  onCycle(report: CycleReport): void {
    for (const [phase, ms] of Object.entries(report.phasesMs)) this.cyclePhase.observe({ phase }, ms / 1000);
    this.cyclePhase.observe({ phase: 'total' }, report.totalMs / 1000);
    this.lastCycleTimestamp.set(report.startedAt / 1000);
    const { result, snapshot } = report;
    this.decisions.inc({ kind: 'admitted' }, result.admissions.length);
    this.decisions.inc({ kind: 'preempted' }, result.preemptions.length);
    this.decisions.inc({ kind: 'budget-stopped' }, result.budgetStops?.length ?? 0);
    this.decisions.inc({ kind: 'reserved' }, result.reservations.length);
    this.decisions.inc({ kind: 'pending' }, result.pending.length);
    for (const preemption of result.preemptions) this.preemptions.inc({ kind: preemption.kind });
    this.reservations.set(result.reservations.length);

    const pendingById = new Map(snapshot.pending.map((job) => [job.id, job]));
    for (const admission of result.admissions) {
      const job = pendingById.get(admission.jobId);
      if (!job) continue;
      const since = job.queuedAt ?? job.submittedAt;
      this.admissionLatency.observe({ team: admission.team, flavor: admission.flavor }, Math.max(0, report.startedAt - since) / 1000);
    }
    this.setAccelerators(snapshot, report);
  }

  onCycleFailed(phase: CyclePhase | 'unknown', error?: unknown): void {
    this.cycleFailures.inc({ phase });
    if (error instanceof InvariantViolationError) {
      for (const v of error.violations) this.invariantViolations.inc({ rule: String(v.rule), code: v.code });
    }
  }

  onDone(kind: string): void {
    this.sideEffects.inc({ kind, outcome: 'done' });
  }

  onFailed(kind: string, final: boolean): void {
    this.sideEffects.inc({ kind, outcome: final ? 'failed' : 'retry' });
  }

  setJobCounts(counts: readonly JobStateCount[]): void {
    this.jobs.reset();
    for (const c of counts) this.jobs.set({ state: c.state, team: c.team, flavor: c.flavor }, c.count);
  }

  setLeader(isLeader: boolean): void {
    this.leader.set(isLeader ? 1 : 0);
  }

  /** Totals per flavor, and allocation/borrowing per team and flavor after the cycle's admissions, preemptions and budget stops. */
  private setAccelerators(snapshot: Snapshot, report: CycleReport): void {
    this.accelerators.reset();
    const totals = new Map<string, number>();
    for (const node of snapshot.nodes) totals.set(node.flavor, (totals.get(node.flavor) ?? 0) + node.accelerators);
    for (const [flavor, total] of totals) this.accelerators.set({ kind: 'total', flavor, team: '' }, total);

    const preempted = new Set([...report.result.preemptions.map((p) => p.victimJobId), ...(report.result.budgetStops ?? []).map((s) => s.jobId)]);
    const used = new Map<string, { team: string; flavor: string; n: number }>();
    const add = (team: string, flavor: string, n: number): void => {
      const key = `${team}\u0000${flavor}`;
      const current = used.get(key) ?? { team, flavor, n: 0 };
      current.n += n;
      used.set(key, current);
    };
    for (const job of snapshot.running) {
      if (preempted.has(job.id)) continue;
      add(job.team, job.flavor, job.placement.reduce((sum, p) => sum + p.accelerators, 0));
    }
    for (const admission of report.result.admissions) {
      add(admission.team, admission.flavor, admission.placement.reduce((sum, p) => sum + p.accelerators, 0));
    }
    const nominal = new Map(snapshot.quotas.map((q) => [`${q.team}\u0000${q.flavor}`, q.nominal]));
    for (const [key, { team, flavor, n }] of used) {
      this.accelerators.set({ kind: 'allocated', flavor, team }, n);
      this.accelerators.set({ kind: 'borrowed', flavor, team }, Math.max(0, n - (nominal.get(key) ?? 0)));
    }
  }
}
