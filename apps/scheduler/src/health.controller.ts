import { Controller, Get, Headers, Inject, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { register } from 'prom-client';
import { AppError, type Readiness, type PublicReadiness, checkReadiness, opsAccessAllowed, publicReadiness } from '#common';
import { OPS_ACCESS, PROBES, PROCESS_STATUS, type OpsAccess, type ProcessStatus, type Probes } from './process-status.js';

/** What /readyz answers the token's bearer (or everyone, without QM_METRICS_TOKEN): the dependencies' checks, the process's role and its status details. */
export interface ProcessReadiness extends Record<string, unknown> {
  status: Readiness['status'];
  role: ProcessStatus['role'];
  checks: Readiness['checks'];
}

/**
 * Operations endpoints of the scheduler and worker processes (QM_SCHEDULER_PORT, QM_WORKER_PORT). With
 * QM_METRICS_TOKEN set they follow the API's rule: /metrics (team names, job counts, the leader) answers
 * only `Authorization: Bearer <QM_METRICS_TOKEN>` (401 problem+json otherwise) and /readyz shows others
 * only ready/unavailable and ok per dependency; /healthz stays open (liveness probes carry no token).
 */
@Controller()
export class HealthController {
  constructor(
    @Inject(PROCESS_STATUS) private readonly status: ProcessStatus,
    @Inject(PROBES) private readonly probes: Probes,
    @Inject(OPS_ACCESS) private readonly access: OpsAccess,
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
  async readyz(@Res({ passthrough: true }) reply: FastifyReply, @Headers('authorization') authorization: string | undefined): Promise<ProcessReadiness | PublicReadiness> {
    const r = await checkReadiness({ postgres: { probe: () => this.probes.postgres() }, redis: { probe: () => this.probes.redis() } }, this.probes.timeoutMs);
    void reply.status(r.ready ? 200 : 503);
    // Timings, Postgres/Redis error text and the leader's host:pid are for the token's bearer only.
    if (!this.operator(authorization)) return publicReadiness(r);
    return { ...this.status.details(), status: r.status, role: this.status.role, checks: r.checks };
  }

  @Get('metrics')
  async metrics(@Res({ passthrough: true }) reply: FastifyReply, @Headers('authorization') authorization: string | undefined): Promise<string> {
    if (!this.operator(authorization)) {
      throw new AppError('UNAUTHENTICATED', '/metrics needs Authorization: Bearer <QM_METRICS_TOKEN> (Prometheus: authorization.credentials)');
    }
    void reply.header('content-type', register.contentType);
    return register.metrics();
  }

  /** True when the caller may see everything: no QM_METRICS_TOKEN set, or it carries it. */
  private operator(authorization: string | undefined): boolean {
    return opsAccessAllowed(authorization, this.access.metricsTokenHash);
  }
}
