import type { ChaosService, Reply } from './service.js';
import { jobBody } from './service.js';

/** What a stream of submissions saw: every answer's status (0 = no answer), and the accepted job ids by key. */
export interface StreamResult {
  statuses: number[];
  /** Answers with status >= 500, kept whole for the failure message. */
  serverErrors: Reply[];
  jobs: Map<string, string>;
}

/**
 * Submits `count` jobs from `concurrency` clients, each retrying its job (same Idempotency-Key) until it
 * is accepted, as a well-behaved client does after a 503 or a dropped connection.
 */
export async function submitStream(
  s: ChaosService,
  count: number,
  concurrency: number,
  onAnswer: (status: number) => void = () => undefined,
  keyPrefix = 'chaos',
): Promise<StreamResult> {
  const result: StreamResult = { statuses: [], serverErrors: [], jobs: new Map() };
  let next = 0;
  const client = async (): Promise<void> => {
    for (let i = next++; i < count; i = next++) {
      const key = `${keyPrefix}-${i}`;
      for (;;) {
        let reply: Reply | null = null;
        try {
          reply = await s.request('POST', '/v1/jobs', jobBody(`job-${i}`), { 'idempotency-key': key });
        } catch {
          // connection refused or reset: the process may be gone; the caller checks
        }
        const status = reply?.status ?? 0;
        result.statuses.push(status);
        onAnswer(status);
        if (reply && status >= 500) result.serverErrors.push(reply);
        if (reply && (status === 201 || status === 200)) {
          result.jobs.set(key, reply.body.id as string);
          break;
        }
        if (reply && status >= 400 && status < 500) throw new Error(`job ${i}: ${status} ${JSON.stringify(reply.body)}`);
        if (!s.alive()) throw new Error('the service process exited');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  return result;
}

/**
 * An executor outside Kubernetes: reports every job holding accelerators as SUCCEEDED (through the
 * API, retrying through faults), and checks on each pass that no node holds more than it has.
 */
export function startExecutor(s: ChaosService): { overAllocations: string[]; stop(): Promise<void> } {
  const overAllocations: string[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      try {
        const over = await s.pg.query<{ node: string; used: number; accelerators: number }>(
          `SELECT a.node, sum(a.accelerators)::int AS used, n.accelerators FROM allocations a JOIN nodes n ON n.name = a.node
           GROUP BY a.node, n.accelerators HAVING sum(a.accelerators) > n.accelerators`,
        );
        for (const row of over.rows) overAllocations.push(`${row.node}: ${row.used} of ${row.accelerators}`);
        const { rows } = await s.pg.query<{ id: string }>(`SELECT id FROM jobs WHERE state IN ('ADMITTED', 'BINDING', 'RUNNING')`);
        for (const { id } of rows) await s.request('POST', `/v1/jobs/${id}/status`, { state: 'SUCCEEDED', reason: 'exit code 0' }).catch(() => undefined);
      } catch {
        // a fault: try again
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  return {
    overAllocations,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

/** Per job: its state and how many times it was admitted (job_transitions → ADMITTED). */
export async function jobLedger(s: ChaosService): Promise<{ states: Record<string, number>; admittedTwice: string[]; total: number }> {
  const { rows } = await s.pg.query<{ id: string; state: string; admitted: number }>(
    `SELECT j.id, j.state, (SELECT count(*)::int FROM job_transitions t WHERE t.job_id = j.id AND t.to = 'ADMITTED') AS admitted FROM jobs j`,
  );
  const states: Record<string, number> = {};
  for (const r of rows) states[r.state] = (states[r.state] ?? 0) + 1;
  return { states, admittedTwice: rows.filter((r) => r.admitted > 1).map((r) => r.id), total: rows.length };
}
