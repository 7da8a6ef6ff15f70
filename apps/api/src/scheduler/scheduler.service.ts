import { Inject, Injectable } from '@nestjs/common';
import { AppError } from '#common';
import { SchedulerStateRepository } from '#db';
import { NotLeaderError } from '#scheduling';
import { CYCLE_RUNNER } from '../infra/tokens.js';
import type { CycleRunnerPort } from './cycle-runner.port.js';
import type { CycleRunView, SchedulerStatusView } from './scheduler.view.js';

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** The scheduler as the API sees it: its lease and last cycle, and one cycle on demand. */
@Injectable()
export class SchedulerService {
  constructor(
    @Inject(SchedulerStateRepository) private readonly state: SchedulerStateRepository,
    @Inject(CYCLE_RUNNER) private readonly cycles: CycleRunnerPort,
  ) {}

  async status(): Promise<SchedulerStatusView> {
    const s = await this.state.status();
    return {
      leader: s.leader && {
        holder: s.leader.holder,
        live: s.leader.live,
        fencingToken: s.leader.fencingToken,
        renewedAt: s.leader.renewedAt.toISOString(),
        expiresAt: s.leader.expiresAt.toISOString(),
      },
      lastCycle: s.lastCycle && {
        number: Number(s.lastCycle.number),
        at: s.lastCycle.startedAt.toISOString(),
        durationMs: s.lastCycle.durationMs,
        admitted: s.lastCycle.admitted,
        preempted: s.lastCycle.preempted,
        pending: s.lastCycle.pending,
      },
      pendingCount: s.pendingCount,
    };
  }

  /** 409 CONFLICT when another process holds the scheduler lease. */
  async runCycle(): Promise<CycleRunView> {
    try {
      const report = await this.cycles.run();
      const r = report.result;
      return {
        cycle: report.cycle,
        committed: report.committed,
        startedAt: iso(report.startedAt),
        durationMs: Math.round(report.totalMs * 100) / 100,
        phasesMs: report.phasesMs,
        stats: r.stats,
        admissions: r.admissions,
        preemptions: r.preemptions,
        moves: (r.moves ?? []).map((m) => ({ ...m, expectedEndBefore: iso(m.expectedEndBefore), expectedEndAfter: iso(m.expectedEndAfter) })),
        budgetStops: (r.budgetStops ?? []).map((s) => ({
          jobId: s.jobId,
          team: s.team,
          flavor: s.flavor,
          accelerators: s.accelerators,
          period: s.period,
          until: iso(s.until),
          lostAcceleratorSeconds: s.lostAcceleratorSeconds,
          gracePeriodSeconds: s.gracePeriodSeconds,
          message: s.message,
        })),
        reservations: r.reservations.map((x) => ({ ...x, startAt: iso(x.startAt) })),
        pending: r.pending.map((p) => ({ ...p, estimatedStartAt: iso(p.estimatedStartAt) })),
      };
    } catch (error) {
      if (error instanceof NotLeaderError) throw new AppError('CONFLICT', `another process holds the scheduler lease: ${error.message}`);
      throw error;
    }
  }
}
