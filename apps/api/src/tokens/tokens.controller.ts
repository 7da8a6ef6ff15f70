import { applyDecorators, Body, Controller, Delete, Get, Header, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminOnly, Caller, ExecutorAllowed } from '../auth/auth.decorators.js';
import type { Principal } from '../auth/principal.js';
import { CreateTokenDto } from './token.dto.js';
import { CreatedTokenView, TokenListView, WhoamiView } from './token.view.js';
import { TokensService } from './tokens.service.js';
import { ApiProblems } from '../problem.doc.js';
import { Answers } from '../response.doc.js';

/**
 * Answers that carry a token secret, or say which tokens exist and whose they are, are never kept by a
 * browser, proxy or client cache (HTTP/1.0 caches read Pragma).
 */
const NotCached = (): MethodDecorator => applyDecorators(Header('Cache-Control', 'no-store'), Header('Pragma', 'no-cache'));

@ApiTags('auth')
@ApiBearerAuth()
@ApiProblems()
@Controller('v1')
export class TokensController {
  constructor(@Inject(TokensService) private readonly tokens: TokensService) {}

  @Post('tokens')
  @AdminOnly()
  @ApiOperation({
    summary: 'Create an API token',
    description:
      "Admin only. Creates a token for an admin, a member (acts for its teams) or an executor (reads its teams' jobs and reports their state); " +
      'the secret is in this 201 answer only (it is stored as a sha256 hash; the answer is sent with Cache-Control: no-store). The creation is audited ' +
      '(event token.created: id, subject, role, teams; never the secret). 400 when a member or executor token lists no team or an admin token ' +
      'lists some; 422 naming unknown teams.',
  })
  @HttpCode(201)
  @NotCached()
  @Answers(CreatedTokenView, 201)
  create(@Body() dto: CreateTokenDto, @Caller() caller: Principal): Promise<CreatedTokenView> {
    return this.tokens.create(dto, caller);
  }

  @Get('tokens')
  @AdminOnly()
  @ApiOperation({ summary: 'List API tokens', description: 'Admin only. Every stored token without its secret, revoked ones included (`revokedAt`).' })
  @NotCached()
  @Answers(TokenListView)
  async list(): Promise<TokenListView> {
    return { items: await this.tokens.list() };
  }

  @Delete('tokens/:id')
  @AdminOnly()
  @ApiOperation({
    summary: 'Revoke an API token',
    description:
      'Admin only. 204, also when it was revoked already (audited once: event token.revoked); every API replica refuses it as soon as the revocation reaches it over Redis (within QM_TOKEN_CACHE_TTL_MS, 5 s by default, without Redis). ' +
      'The token of the request itself cannot be revoked (409), so an admin cannot lock themselves out by mistake; 404 for an unknown id ' +
      '(QM_ADMIN_TOKEN is not a stored token).',
  })
  @HttpCode(204)
  revoke(@Param('id') id: string, @Caller() caller: Principal): Promise<void> {
    return this.tokens.revoke(id, caller);
  }

  @Get('whoami')
  @ExecutorAllowed()
  @ApiOperation({
    summary: 'Show who the token belongs to',
    description: "The caller's subject, role, teams and token id (null for QM_ADMIN_TOKEN). Any valid token, executor tokens included.",
  })
  @NotCached()
  @Answers(WhoamiView)
  whoami(@Caller() caller: Principal): WhoamiView {
    return { subject: caller.subject, role: caller.role, teams: caller.teams, tokenId: caller.tokenId };
  }
}
