/**
 * The typed catalogue of side-effect queue jobs (Immich's JobName → payload pattern).
 *
 * Every side effect is decided in a committed scheduling transaction and written as an outbox entry
 * (`outbox.kind` is one of these names). The relay enqueues one BullMQ job per outbox entry, named by
 * the kind, with the outbox id as BullMQ job id and as its only data: handlers re-read the entry and
 * the job it names, so a duplicate or late delivery is harmless (handlers are idempotent).
 */

/** Payload stored in `outbox.payload` for each kind. Payloads carry ids, never state. */
export interface SideEffectPayloads {
  /** A gang was admitted: bind its pods (Kubernetes) or just acknowledge it (standalone). */
  bind: { jobId: string };
  /** A gang was preempted: evict its pods whole. */
  evict: { jobId: string; preemptorJobId?: string };
  /** A job was cancelled or ended: delete whatever it still has in the cluster. */
  delete: { jobId: string };
  /** A decision others may want to hear about (admitted, requeued...). No cluster action. */
  notify: { jobId: string; event?: string };
}

export type SideEffectName = keyof SideEffectPayloads;

/** All names, in a fixed order. The `satisfies` clause plus the exhaustiveness check below keep it complete. */
export const SIDE_EFFECT_NAMES = ['bind', 'evict', 'delete', 'notify'] as const satisfies readonly SideEffectName[];

// Compile-time check: every key of SideEffectPayloads is listed in SIDE_EFFECT_NAMES.
type Missing = Exclude<SideEffectName, (typeof SIDE_EFFECT_NAMES)[number]>;
const _catalogueIsComplete: Missing extends never ? true : Missing = true;
void _catalogueIsComplete;

export function isSideEffectName(value: unknown): value is SideEffectName {
  return typeof value === 'string' && (SIDE_EFFECT_NAMES as readonly string[]).includes(value);
}

/** What the queue carries: only the outbox id (the entry holds kind and payload). */
export interface SideEffectJobData {
  outboxId: string;
}

/** Validates a stored payload against its kind. Throws a clear error on a malformed entry. */
export function parseSideEffectPayload<N extends SideEffectName>(name: N, raw: unknown): SideEffectPayloads[N] {
  if (typeof raw !== 'object' || raw === null) throw new Error(`outbox ${name} payload must be an object, got ${JSON.stringify(raw)}`);
  const jobId = (raw as { jobId?: unknown }).jobId;
  if (typeof jobId !== 'string' || jobId.length === 0) {
    throw new Error(`outbox ${name} payload needs a string jobId, got ${JSON.stringify(raw)}`);
  }
  return raw as SideEffectPayloads[N];
}
