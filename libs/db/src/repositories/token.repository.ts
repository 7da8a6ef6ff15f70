import type { DbHandle } from './db-handle.js';

export interface TokenRecord {
  id: string;
  subject: string;
  role: 'admin' | 'member';
  teams: string[];
  createdAt: Date;
}

interface TokenRow {
  id: string;
  subject: string;
  role: 'admin' | 'member';
  teams: string[];
  created_at: Date;
}

const toRecord = (r: TokenRow): TokenRecord => ({ id: r.id, subject: r.subject, role: r.role, teams: r.teams, createdAt: r.created_at });

/** API tokens, stored as sha256 hashes only. */
export class TokenRepository {
  constructor(private readonly db: DbHandle) {}

  async create(input: { subject: string; role: 'admin' | 'member'; teams: string[]; tokenHash: string }): Promise<TokenRecord> {
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

  async count(): Promise<number> {
    const { rows } = await this.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM api_tokens');
    return rows[0]?.n ?? 0;
  }
}
