import type { DbHandle } from './db-handle.js';
import type { Prisma } from '../generated/prisma/client.js';
import type { Role } from '../generated/prisma/enums.js';
import { UUID } from '../uuid.js';

export type TokenRole = Role;

const TOKEN_SELECT = { id: true, subject: true, role: true, teams: true, createdAt: true } as const satisfies Prisma.ApiTokenSelect;
export type TokenRecord = Prisma.ApiTokenGetPayload<{ select: typeof TOKEN_SELECT }>;

/** API tokens, stored as sha256 hashes only (Prisma client). */
export class TokenRepository {
  constructor(private readonly db: DbHandle) {}

  async create(input: { subject: string; role: TokenRole; teams: string[]; tokenHash: string }): Promise<TokenRecord> {
    return this.db.prisma.apiToken.create({ data: input, select: TOKEN_SELECT });
  }

  async findActiveByHash(tokenHash: string): Promise<TokenRecord | null> {
    return this.db.prisma.apiToken.findFirst({ where: { tokenHash, revokedAt: null }, select: TOKEN_SELECT });
  }

  /** Every token (newest first), revoked ones with their revocation time; never the hash. */
  async list(): Promise<(TokenRecord & { revokedAt: Date | null })[]> {
    return this.db.prisma.apiToken.findMany({ select: { ...TOKEN_SELECT, revokedAt: true }, orderBy: [{ createdAt: 'desc' }, { id: 'asc' }] });
  }

  /** Revokes a token (idempotent: an already revoked one keeps its first revocation time). */
  async revoke(id: string): Promise<'revoked' | 'missing'> {
    if (!UUID.test(id)) return 'missing';
    const { count } = await this.db.prisma.apiToken.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: new Date() } });
    if (count === 1) return 'revoked';
    return (await this.db.prisma.apiToken.count({ where: { id } })) === 1 ? 'revoked' : 'missing';
  }

  async count(): Promise<number> {
    return this.db.prisma.apiToken.count();
  }
}
