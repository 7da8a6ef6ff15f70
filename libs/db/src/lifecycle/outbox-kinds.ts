/**
 * The typed catalogue of outbox kinds: every side effect decided in a committed transaction is one
 * `outbox` row of one of these kinds (the relay enqueues it as a queue job named by the kind). Written
 * only by the transition writer (transition-writer.ts), so each kind has one payload shape and one
 * dedupe scheme.
 */

/** Payload stored in `outbox.payload` for each kind. Payloads carry ids, never state. */
export interface OutboxPayloads {
  /** A gang was admitted: bind its pods (Kubernetes) or just acknowledge it (standalone). */
  bind: { jobId: string };
  /** A gang was preempted: evict its pods whole. */
  evict: { jobId: string; preemptorJobId?: string };
  /** A job ended, was cancelled or requeued: delete whatever it still has in the cluster. */
  delete: { jobId: string };
  /** A decision others may want to hear about (admitted, requeued...). No cluster action. */
  notify: { jobId: string; event?: string };
}

export type OutboxKind = keyof OutboxPayloads;

/**
 * All kinds, in the order a transaction writes them (evictions before the binds that wait for them).
 * The `satisfies` clause plus the check below keep the list complete.
 */
export const OUTBOX_KINDS = ['evict', 'delete', 'bind', 'notify'] as const satisfies readonly OutboxKind[];

type Missing = Exclude<OutboxKind, (typeof OUTBOX_KINDS)[number]>;
const _catalogueIsComplete: Missing extends never ? true : Missing = true;
void _catalogueIsComplete;

export function isOutboxKind(value: unknown): value is OutboxKind {
  return typeof value === 'string' && (OUTBOX_KINDS as readonly string[]).includes(value);
}

/**
 * One outbox entry a transition asks for; the writer adds `jobId` to the payload. `ifHeld`: only when
 * the job held an allocation before the move (a cancelled PENDING job has nothing in the cluster).
 */
export type OutboxEffect = {
  [K in OutboxKind]: { kind: K; payload?: Omit<OutboxPayloads[K], 'jobId'>; ifHeld?: boolean };
}[OutboxKind];

/**
 * The one dedupe scheme: `<kind>[:<event>]:<job id>:v<job version after the move>`. Each move bumps the
 * job's version, so a decision's entry is written once however often its transaction is retried, and two
 * decisions about one job never collide.
 */
export function outboxDedupeKey(kind: OutboxKind, jobId: string, version: number, event?: string): string {
  return `${kind}:${event === undefined ? '' : `${event}:`}${jobId}:v${version}`;
}

/** The same key in SQL, over columns/expressions for kind, payload (jsonb), job id and version. */
export const OUTBOX_DEDUPE_SQL = (kind: string, payload: string, jobId: string, version: string): string =>
  `${kind} || ':' || COALESCE((${payload})->>'event' || ':', '') || ${jobId}::text || ':v' || ${version}::text`;

/** Validates a stored payload against its kind. Throws a clear error on a malformed entry. */
export function parseOutboxPayload<K extends OutboxKind>(kind: K, raw: unknown): OutboxPayloads[K] {
  if (typeof raw !== 'object' || raw === null) throw new Error(`outbox ${kind} payload must be an object, got ${JSON.stringify(raw)}`);
  const jobId = (raw as { jobId?: unknown }).jobId;
  if (typeof jobId !== 'string' || jobId.length === 0) {
    throw new Error(`outbox ${kind} payload needs a string jobId, got ${JSON.stringify(raw)}`);
  }
  return raw as OutboxPayloads[K];
}
