/** One row of the transactional outbox, as the relay and the workers see it. */
export interface OutboxRecord {
  id: string;
  kind: string;
  payload: unknown;
  status: 'pending' | 'done' | 'failed';
  attempts: number;
  availableAt: Date;
}

export interface OutboxRef {
  id: string;
  kind: string;
  /** When the entry became due (listDue fills it; used to find entries stuck in a damaged queue). */
  availableAt?: Date;
}

/** Outbox persistence (implemented over libs/db). */
export interface OutboxStore {
  /** Pending entries whose `availableAt` has passed, oldest first, ids greater than `afterId`. */
  listDue(now: Date, limit: number, afterId?: string): Promise<OutboxRef[]>;
  get(id: string): Promise<OutboxRecord | null>;
  /** Which of `ids` are still pending (one read, for the relay's repair). */
  stillPending(ids: readonly string[]): Promise<Set<string>>;
  /** Marks the entry done (idempotent). */
  markDone(id: string): Promise<void>;
  /**
   * Records a failed attempt. `retryAt` set: the entry stays pending and is re-enqueued by reconcile once
   * due; `retryAt` null: the failure is permanent and the entry becomes `failed`.
   */
  recordFailure(id: string, error: string, retryAt: Date | null): Promise<void>;
}
