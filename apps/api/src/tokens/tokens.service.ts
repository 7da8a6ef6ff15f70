import { Inject, Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { AppError, Config, sha256Hex, unknownReference } from '#common';
import { TeamRepository, TokenRepository } from '#db';
import type { Principal } from '../auth/principal.js';
import { TokenCache } from '../auth/token-cache.js';
import { TokenRevocations } from '../auth/token-revocations.js';
import type { CreateTokenDto } from './token.dto.js';
import type { CreatedTokenView, TokenView } from './token.view.js';

/** API tokens: created with a fresh secret (kept only as its hash), listed, revoked; creations and revocations audited. */
@Injectable()
export class TokensService {
  constructor(
    @Inject(TokenRepository) private readonly tokens: TokenRepository,
    @Inject(TeamRepository) private readonly teams: TeamRepository,
    @Inject(TokenCache) private readonly cache: TokenCache,
    @Inject(TokenRevocations) private readonly revocations: TokenRevocations,
    @Inject(Config) private readonly config: Config,
  ) {}

  async create(dto: CreateTokenDto, caller: Principal): Promise<CreatedTokenView> {
    const teams = dto.teams ?? [];
    const article = dto.role === 'executor' ? 'an' : 'a';
    if (dto.role !== 'admin' && teams.length === 0) {
      throw new AppError('VALIDATION_FAILED', `${article} ${dto.role} token needs at least one team`, [{ field: 'teams', message: `must list at least 1 team for ${article} ${dto.role}` }]);
    }
    if (dto.role === 'admin' && teams.length > 0) {
      throw new AppError('VALIDATION_FAILED', 'an admin token acts for every team', [{ field: 'teams', message: 'must be empty for an admin' }]);
    }
    const expiresAt = this.expiryOf(dto);
    const missing = await this.teams.missing(teams);
    if (missing.length > 0) throw unknownReference('teams', `unknown team${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}`);
    const secret = `qm_${randomBytes(24).toString('base64url')}`;
    const tokenHash = sha256Hex(secret);
    const record = await this.tokens.create({ subject: dto.subject, role: dto.role, teams, tokenHash, expiresAt }, caller.subject);
    this.cache.created(tokenHash);
    return {
      token: secret,
      id: record.id,
      subject: record.subject,
      role: record.role,
      teams: record.teams,
      createdAt: record.createdAt.toISOString(),
      expiresAt: record.expiresAt?.toISOString() ?? null,
    };
  }

  /** `expiresAt` as sent (in the future), never with `neverExpires: true`, else QM_TOKEN_TTL_DAYS from now. */
  private expiryOf(dto: CreateTokenDto): Date | null {
    const never = dto.neverExpires === true;
    if (never && dto.expiresAt != null) {
      throw new AppError('VALIDATION_FAILED', 'a token either expires at expiresAt or never (neverExpires: true), not both', [
        { field: 'neverExpires', message: 'must not be true together with expiresAt' },
      ]);
    }
    if (never) return null;
    if (dto.expiresAt == null) return new Date(Date.now() + this.config.tokenTtlDays * 86_400_000);
    const at = new Date(dto.expiresAt);
    if (Number.isNaN(at.getTime())) throw new AppError('VALIDATION_FAILED', 'expiresAt is not a valid time', [{ field: 'expiresAt', message: 'is not a valid time' }]);
    if (at.getTime() <= Date.now()) {
      throw new AppError('VALIDATION_FAILED', `expiresAt ${dto.expiresAt} is not in the future`, [{ field: 'expiresAt', message: 'must be in the future' }]);
    }
    return at;
  }

  async list(): Promise<TokenView[]> {
    return (await this.tokens.list()).map((t) => ({
      id: t.id,
      subject: t.subject,
      role: t.role,
      teams: t.teams,
      createdAt: t.createdAt.toISOString(),
      revokedAt: t.revokedAt?.toISOString() ?? null,
      expiresAt: t.expiresAt?.toISOString() ?? null,
      lastUsedAt: t.lastUsedAt?.toISOString() ?? null,
    }));
  }

  /** Idempotent; 409 for the token of the request itself, 404 for an unknown id. */
  async revoke(id: string, caller: Principal): Promise<void> {
    if (caller.tokenId !== null && caller.tokenId.toLowerCase() === id.toLowerCase()) {
      throw new AppError('CONFLICT', 'this request is authenticated with that token: revoke it with another admin token');
    }
    const outcome = await this.tokens.revoke(id, caller.subject);
    if (outcome === 'missing') throw new AppError('NOT_FOUND', `no token ${id.slice(0, 80)}`);
    this.cache.revoked(id);
    await this.revocations.announce(id);
  }
}
