import { OutboxRepository, type SqlHandle } from '#db';
import type { OutboxStore } from '../outbox-store.js';

/** The outbox table through libs/db (OutboxRepository), over a pool. */
export class PgOutboxStore extends OutboxRepository implements OutboxStore {
  constructor(pool: SqlHandle['pool']) {
    super({ pool });
  }
}
