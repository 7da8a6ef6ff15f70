import { Body, Controller, Get, HttpCode, Inject, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { randomBytes } from 'node:crypto';
import { AppError, sha256Hex, unknownReference } from '#common';
import { TeamRepository, TokenRepository } from '#db';
import { AdminOnly, Caller } from '../auth/auth.decorators.js';
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
    if (dto.role === 'member' && teams.length === 0) {
      throw new AppError('VALIDATION_FAILED', 'a member token needs at least one team', [{ field: 'teams', message: 'must list at least 1 team for a member' }]);
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

  @Get('whoami')
  whoami(@Caller() caller: Principal): unknown {
    return { subject: caller.subject, role: caller.role, teams: caller.teams, tokenId: caller.tokenId };
  }
}
