import { CycleLock, type SqlHandle } from '#db';

export { CYCLE_LOCK_KEY } from '#db';

/** The cross-process cycle lock of libs/db (a session-level advisory lock), over a pool. */
export class PgCycleLock extends CycleLock {
  constructor(pool: SqlHandle['pool'], key?: number) {
    super({ pool }, key);
  }
}
