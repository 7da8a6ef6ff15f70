import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { AdminOnly, Caller, ExecutorAllowed } from '../auth/auth.decorators.js';
import type { Principal } from '../auth/principal.js';
import { CreateTokenDto } from './token.dto.js';
import { CreatedTokenView, TokenListView, WhoamiView } from './token.view.js';
import { TokensService } from './tokens.service.js';
import { ApiProblems } from '../problem.doc.js';
import { Answers } from '../response.doc.js';

@ApiTags('auth')
@ApiBearerAuth()
@ApiProblems()
@Controller('v1')
export class TokensController {
  constructor(@Inject(TokensService) private readonly tokens: TokensService) {}

  /** Creates a token; the secret is in this response only (it is stored as a sha256 hash). */
  @Post('tokens')
  @AdminOnly()
  @HttpCode(201)
  @Answers(CreatedTokenView, 201)
  create(@Body() dto: CreateTokenDto): Promise<CreatedTokenView> {
    return this.tokens.create(dto);
  }

  /** Every token without its secret, revoked ones included (`revokedAt`). */
  @Get('tokens')
  @AdminOnly()
  @Answers(TokenListView)
  async list(): Promise<TokenListView> {
    return { items: await this.tokens.list() };
  }

  /**
   * Revokes a token: 204, also when it was revoked already. Every API replica refuses it within
   * QM_TOKEN_CACHE_TTL_MS (5 s by default). The token of the request itself cannot be revoked (409), so
   * an admin cannot lock themselves out by mistake; QM_ADMIN_TOKEN is not a stored token (404).
   */
  @Delete('tokens/:id')
  @AdminOnly()
  @HttpCode(204)
  revoke(@Param('id') id: string, @Caller() caller: Principal): Promise<void> {
    return this.tokens.revoke(id, caller);
  }

  @Get('whoami')
  @ExecutorAllowed()
  @Answers(WhoamiView)
  whoami(@Caller() caller: Principal): WhoamiView {
    return { subject: caller.subject, role: caller.role, teams: caller.teams, tokenId: caller.tokenId };
  }
}
