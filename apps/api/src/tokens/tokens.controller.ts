import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { randomBytes } from 'node:crypto';
import { AppError, sha256Hex, unknownReference } from '#common';
import { TeamRepository, TokenRepository } from '#db';
import { AdminOnly, Caller, ExecutorAllowed } from '../auth/auth.decorators.js';
import type { Principal } from '../auth/principal.js';
import { CreateTokenDto } from './token.dto.js';
import { ApiProblems } from '../problem.doc.js';

@ApiTags('auth')
@ApiBearerAuth()
@ApiProblems()
@Controller('v1')
export class TokensController {
  constructor(
    @Inject(TokenRepository) private readonly tokens: TokenRepository,
    @Inject(TeamRepository) private readonly teams: TeamRepository,
  ) {}

  /** Creates a token; the secret is in this response only (it is stored as a sha256 hash). */
  @Post('tokens')
  @AdminOnly()
  @HttpCode(201)
  async create(@Body() dto: CreateTokenDto): Promise<unknown> {
    const teams = dto.teams ?? [];
    if (dto.role !== 'admin' && teams.length === 0) {
      throw new AppError('VALIDATION_FAILED', `a${dto.role === 'executor' ? 'n' : ''} ${dto.role} token needs at least one team`, [{ field: 'teams', message: `must list at least 1 team for a${dto.role === 'executor' ? 'n' : ''} ${dto.role}` }]);
    }
    if (dto.role === 'admin' && teams.length > 0) {
      throw new AppError('VALIDATION_FAILED', 'an admin token acts for every team', [{ field: 'teams', message: 'must be empty for an admin' }]);
    }
    const missing = await this.teams.missing(teams);
    if (missing.length > 0) throw unknownReference('teams', `unknown team${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}`);
    const secret = `qm_${randomBytes(24).toString('base64url')}`;
    const record = await this.tokens.create({ subject: dto.subject, role: dto.role, teams, tokenHash: sha256Hex(secret) });
    return { token: secret, id: record.id, subject: record.subject, role: record.role, teams: record.teams, createdAt: record.createdAt.toISOString() };
  }

  /** Every token without its secret, revoked ones included (`revokedAt`). */
  @Get('tokens')
  @AdminOnly()
  async list(): Promise<unknown> {
    const items = await this.tokens.list();
    return { items: items.map((t) => ({ id: t.id, subject: t.subject, role: t.role, teams: t.teams, createdAt: t.createdAt.toISOString(), revokedAt: t.revokedAt?.toISOString() ?? null })) };
  }

  /**
   * Revokes a token: 204, also when it was revoked already. Every API replica refuses it within
   * QM_TOKEN_CACHE_TTL_MS (5 s by default). The token of the request itself cannot be revoked (409), so
   * an admin cannot lock themselves out by mistake; QM_ADMIN_TOKEN is not a stored token (404).
   */
  @Delete('tokens/:id')
  @AdminOnly()
  @HttpCode(204)
  async revoke(@Param('id') id: string, @Caller() caller: Principal): Promise<void> {
    if (caller.tokenId !== null && caller.tokenId.toLowerCase() === id.toLowerCase()) {
      throw new AppError('CONFLICT', 'this request is authenticated with that token: revoke it with another admin token');
    }
    if ((await this.tokens.revoke(id)) === 'missing') throw new AppError('NOT_FOUND', `no token ${id.slice(0, 80)}`);
  }

  @Get('whoami')
  @ExecutorAllowed()
  whoami(@Caller() caller: Principal): unknown {
    return { subject: caller.subject, role: caller.role, teams: caller.teams, tokenId: caller.tokenId };
  }
}
