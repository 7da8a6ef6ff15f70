/**
 * The side-effect queue's names and payloads (Immich's JobName → payload pattern) are the outbox kinds
 * of libs/db (outbox-kinds.ts, the one catalogue): every side effect is decided in a committed
 * transaction and written as an outbox entry by the transition writer. The relay enqueues one BullMQ job
 * per outbox entry, named by the kind, with the outbox id as BullMQ job id and as its only data: handlers
 * re-read the entry and the job it names, so a duplicate or late delivery is harmless (handlers are idempotent).
 */
import { OUTBOX_KINDS, isOutboxKind, parseOutboxPayload, type OutboxKind, type OutboxPayloads } from '#db';

export type SideEffectPayloads = OutboxPayloads;
export type SideEffectName = OutboxKind;
export const SIDE_EFFECT_NAMES = OUTBOX_KINDS;
export const isSideEffectName = isOutboxKind;
export const parseSideEffectPayload = parseOutboxPayload;

/** What the queue carries: only the outbox id (the entry holds kind and payload). */
export interface SideEffectJobData {
  outboxId: string;
  /** Looks that found the entry not ready yet (NotReadyYetError): they space the next one. */
  polls?: number;
}
