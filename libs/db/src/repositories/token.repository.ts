import type { DbHandle } from './db-handle.js';
import type { Prisma } from '../generated/prisma/client.js';
import type { Role } from '../generated/prisma/enums.js';
import { UUID } from '../uuid.js';
import { TX_OPTIONS, writeTenancyEvent } from './prisma-helpers.js';

export type TokenRole = Role;

const TOKEN_SELECT = { id: true, subject: true, role: true, teams: true, createdAt: true, expiresAt: true, lastUsedAt: true } as const satisfies Prisma.ApiTokenSelect;
export type TokenRecord = Prisma.ApiTokenGetPayload<{ select: typeof TOKEN_SELECT }>;

/** API tokens, stored as sha256 hashes only (Prisma client); creations and revocations are audited events. */
export class TokenRepository {
  constructor(private readonly db: DbHandle) {}

  /**
   * Stores a token and its audit event (token.created: id, subject, role, teams, expiry — never the secret
   * or its hash) in one transaction. The events have no team: admins read them. `expiresAt` null: it never expires.
   */
  async create(input: { subject: string; role: TokenRole; teams: string[]; tokenHash: string; expiresAt: Date | null }, actor: string): Promise<TokenRecord> {
    return this.db.prisma.$transaction(async (tx) => {
      const record = await tx.apiToken.create({ data: input, select: TOKEN_SELECT });
      const scope = record.teams.length > 0 ? ` for team(s) ${record.teams.join(', ')}` : '';
      const expiry = record.expiresAt === null ? ', never expiring,' : `, expiring at ${record.expiresAt.toISOString()},`;
      await writeTenancyEvent(tx, 'token.created', null, actor, `${record.role} token ${record.id} of ${record.subject}${scope}${expiry} created by ${actor}`, {
        token: record.id,
        subject: record.subject,
        role: record.role,
        teams: record.teams,
        expiresAt: record.expiresAt?.toISOString() ?? null,
      });
      return record;
    }, TX_OPTIONS);
  }

  /** The unrevoked token with this hash, expired or not (the caller refuses an expired one, saying so). */
  async findActiveByHash(tokenHash: string): Promise<TokenRecord | null> {
    return this.db.prisma.apiToken.findFirst({ where: { tokenHash, revokedAt: null }, select: TOKEN_SELECT });
  }

  /** Every token (newest first), revoked ones with their revocation time; never the hash. */
  async list(): Promise<(TokenRecord & { revokedAt: Date | null })[]> {
    return this.db.prisma.apiToken.findMany({ select: { ...TOKEN_SELECT, revokedAt: true }, orderBy: [{ createdAt: 'desc' }, { id: 'asc' }] });
  }

  /**
   * Revokes a token (idempotent: an already revoked one keeps its first revocation time), writing its audit
   * event (token.revoked: id, subject) in the same transaction — once, by the revocation that took effect.
   */
  async revoke(id: string, actor: string): Promise<'revoked' | 'missing'> {
    if (!UUID.test(id)) return 'missing';
    return this.db.prisma.$transaction(async (tx) => {
      const [revoked] = await tx.apiToken.updateManyAndReturn({ where: { id, revokedAt: null }, data: { revokedAt: new Date() }, select: { id: true, subject: true } });
      if (revoked !== undefined) {
        await writeTenancyEvent(tx, 'token.revoked', null, actor, `token ${revoked.id} of ${revoked.subject} revoked by ${actor}`, { token: revoked.id, subject: revoked.subject });
        return 'revoked';
      }
      return (await tx.apiToken.count({ where: { id } })) === 1 ? 'revoked' : 'missing';
    }, TX_OPTIONS);
  }

  /**
   * Records that the token was used at `at`, unless a use within `minIntervalMs` before was recorded already
   * (one conditional UPDATE, which writes nothing then): at most one write per token per interval, whichever
   * replica sees its requests.
   */
  async touch(id: string, at: Date, minIntervalMs: number): Promise<void> {
    await this.db.prisma.apiToken.updateMany({
      where: { id, OR: [{ lastUsedAt: null }, { lastUsedAt: { lt: new Date(at.getTime() - minIntervalMs) } }] },
      data: { lastUsedAt: at },
    });
  }

  async count(): Promise<number> {
    return this.db.prisma.apiToken.count();
  }
}
