import type { DbHandle } from './db-handle.js';
import { UUID } from '../uuid.js';

export type TokenRole = 'admin' | 'member' | 'executor';

export interface TokenRecord {
  id: string;
  subject: string;
  role: TokenRole;
  teams: string[];
  createdAt: Date;
}

interface TokenRow {
  id: string;
  subject: string;
  role: TokenRole;
  teams: string[];
  created_at: Date;
}

const toRecord = (r: TokenRow): TokenRecord => ({ id: r.id, subject: r.subject, role: r.role, teams: r.teams, createdAt: r.created_at });

/** API tokens, stored as sha256 hashes only. */
export class TokenRepository {
  constructor(private readonly db: DbHandle) {}

  async create(input: { subject: string; role: TokenRole; teams: string[]; tokenHash: string }): Promise<TokenRecord> {
    const { rows } = await this.db.pool.query<TokenRow>(
      `INSERT INTO api_tokens (subject, role, teams, token_hash) VALUES ($1, $2::role, $3::text[], $4)
       RETURNING id, subject, role, teams, created_at`,
      [input.subject, input.role, input.teams, input.tokenHash],
    );
    return toRecord(rows[0]!);
  }

  async findActiveByHash(tokenHash: string): Promise<TokenRecord | null> {
    const { rows } = await this.db.pool.query<TokenRow>(
      'SELECT id, subject, role, teams, created_at FROM api_tokens WHERE token_hash = $1 AND revoked_at IS NULL',
      [tokenHash],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /** Every token (newest first), revoked ones with their revocation time; never the hash. */
  async list(): Promise<(TokenRecord & { revokedAt: Date | null })[]> {
    const { rows } = await this.db.pool.query<TokenRow & { revoked_at: Date | null }>(
      'SELECT id, subject, role, teams, created_at, revoked_at FROM api_tokens ORDER BY created_at DESC, id',
    );
    return rows.map((r) => ({ ...toRecord(r), revokedAt: r.revoked_at }));
  }

  /** Revokes a token (idempotent: an already revoked one keeps its first revocation time). */
  async revoke(id: string): Promise<'revoked' | 'missing'> {
    if (!UUID.test(id)) return 'missing';
    const { rowCount } = await this.db.pool.query('UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1::uuid', [id]);
    return rowCount === 1 ? 'revoked' : 'missing';
  }

  async count(): Promise<number> {
    const { rows } = await this.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM api_tokens');
    return rows[0]?.n ?? 0;
  }
}
