import { Controller, Get, HttpCode, Inject, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { AppError } from '#common';
import { SchedulerStateRepository } from '#db';
import { NotLeaderError } from '#scheduling';
import { AdminOnly } from '../auth/auth.decorators.js';
import { CYCLE_RUNNER } from '../infra/tokens.js';
import type { CycleRunnerPort } from './cycle-runner.port.js';
import { ApiProblems } from '../problem.doc.js';

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

@ApiTags('scheduler')
@ApiBearerAuth()
@ApiProblems()
@Controller('v1/scheduler')
export class SchedulerController {
  constructor(
    @Inject(SchedulerStateRepository) private readonly state: SchedulerStateRepository,
    @Inject(CYCLE_RUNNER) private readonly cycles: CycleRunnerPort,
  ) {}

  /** Leader, last cycle time and duration, pending count. */
  @Get()
  async status(): Promise<unknown> {
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

  /**
   * Runs one cycle now (loadSnapshot → runCycle → commitCycle, under the cluster-wide cycle lock) and
   * returns its decisions. Also how tests step the scheduler.
   */
  @Post('cycles')
  @AdminOnly()
  @HttpCode(200)
  async runCycle(): Promise<unknown> {
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
        reservations: r.reservations.map((x) => ({ ...x, startAt: iso(x.startAt) })),
        pending: r.pending.map((p) => ({ ...p, estimatedStartAt: iso(p.estimatedStartAt) })),
      };
    } catch (error) {
      if (error instanceof NotLeaderError) throw new AppError('CONFLICT', `another process holds the scheduler lease: ${error.message}`);
      throw error;
    }
  }
}
