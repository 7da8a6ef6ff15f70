import { Controller, Get, Header, Inject, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { register } from 'prom-client';
import { PROBES, PROCESS_STATUS, type ProcessStatus, type Probes } from './process-status.js';

interface Check {
  ok: boolean;
  ms: number;
  error?: string;
}

/** What /readyz answers: the dependencies' checks, the process's role and its status details. */
export interface ProcessReadiness extends Record<string, unknown> {
  status: 'ready' | 'unavailable';
  role: ProcessStatus['role'];
  checks: { postgres: Check; redis: Check };
}

/** Operations endpoints of the scheduler and worker processes. */
@Controller()
export class HealthController {
  constructor(
    @Inject(PROCESS_STATUS) private readonly status: ProcessStatus,
    @Inject(PROBES) private readonly probes: Probes,
  ) {}

  /** Liveness: no dependency is consulted. */
  @Get('healthz')
  healthz(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /**
   * Readiness: Postgres and Redis answer in time. Leadership and the age of the last cycle are reported;
   * a standby is ready (it is what takes over), so leadership does not decide the status code.
   */
  @Get('readyz')
  async readyz(@Res({ passthrough: true }) reply: FastifyReply): Promise<ProcessReadiness> {
    const [postgres, redis] = await Promise.all([check(() => this.probes.postgres(), this.probes.timeoutMs), check(() => this.probes.redis(), this.probes.timeoutMs)]);
    const ready = postgres.ok && redis.ok;
    void reply.status(ready ? 200 : 503);
    return { ...this.status.details(), status: ready ? 'ready' : 'unavailable', role: this.status.role, checks: { postgres, redis } };
  }

  @Get('metrics')
  @Header('Content-Type', register.contentType)
  async metrics(): Promise<string> {
    return register.metrics();
  }
}

async function check(probe: () => Promise<unknown>, timeoutMs: number): Promise<Check> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return { ok: true, ms: Math.round(performance.now() - started) };
  } catch (error) {
    return { ok: false, ms: Math.round(performance.now() - started), error: error instanceof Error ? error.message : String(error) };
  } finally {
    clearTimeout(timer);
  }
}
