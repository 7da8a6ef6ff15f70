import type { Pool } from 'pg';

/** What the hot paths need: the shared pg pool (a `Database` is one). */
export interface SqlHandle {
  readonly pool: Pool;
}
