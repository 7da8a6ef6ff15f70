import type { DbHandle } from './db-handle.js';
import type { Prisma } from '../generated/prisma/client.js';
import type { Role } from '../generated/prisma/enums.js';
import { UUID } from '../uuid.js';
import { TX_OPTIONS, writeTenancyEvent } from './prisma-helpers.js';

export type TokenRole = Role;

const TOKEN_SELECT = { id: true, subject: true, role: true, teams: true, createdAt: true } as const satisfies Prisma.ApiTokenSelect;
export type TokenRecord = Prisma.ApiTokenGetPayload<{ select: typeof TOKEN_SELECT }>;

/** API tokens, stored as sha256 hashes only (Prisma client); creations and revocations are audited events. */
export class TokenRepository {
  constructor(private readonly db: DbHandle) {}

  /**
   * Stores a token and its audit event (token.created: id, subject, role, teams — never the secret or its
   * hash) in one transaction. The events have no team: admins read them.
   */
  async create(input: { subject: string; role: TokenRole; teams: string[]; tokenHash: string }, actor: string): Promise<TokenRecord> {
    return this.db.prisma.$transaction(async (tx) => {
      const record = await tx.apiToken.create({ data: input, select: TOKEN_SELECT });
      const scope = record.teams.length > 0 ? ` for team(s) ${record.teams.join(', ')}` : '';
      await writeTenancyEvent(tx, 'token.created', null, actor, `${record.role} token ${record.id} of ${record.subject}${scope} created by ${actor}`, {
        token: record.id,
        subject: record.subject,
        role: record.role,
        teams: record.teams,
      });
      return record;
    }, TX_OPTIONS);
  }

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

  async count(): Promise<number> {
    return this.db.prisma.apiToken.count();
  }
}
