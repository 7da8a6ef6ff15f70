import type { DbHandle } from './db-handle.js';
import { toJobSummary, type JobSummary } from './job.records.js';

type SummaryRow = Parameters<typeof toJobSummary>[0];

/**
 * A page of jobs read with JOB_SUMMARY_SELECT as summaries, each with the Kubernetes workload its template
 * names. Prisma cannot select a part of a JSON column, so that part is one more read, by the page's ids,
 * through Prisma's tagged template (ADR 0018): Postgres reads the templates, the API gets only their
 * `workload` (five names), never a whole template (ADR 0025).
 */
export async function jobSummaries(db: DbHandle, rows: readonly SummaryRow[]): Promise<JobSummary[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const found = await db.prisma.$queryRaw<{ id: string; workload: Record<string, unknown> }[]>`
    SELECT id::text AS id, template -> 'workload' AS workload FROM jobs WHERE id = ANY(${ids}::uuid[]) AND template ? 'workload'`;
  const workloads = new Map(found.map((w) => [w.id, w.workload]));
  return rows.map((r) => toJobSummary(r, workloads.get(r.id) ?? null));
}
