import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { timingSafeEqual } from 'node:crypto';
import { AppError, Config, sha256Hex } from '#common';
import { ADMIN_ONLY, EXECUTOR_ALLOWED, PUBLIC_ROUTE, type RequestWithPrincipal } from './auth.decorators.js';
import type { Principal } from './principal.js';
import { TokenCache } from './token-cache.js';
import { TokenUsage } from './token-usage.js';

/**
 * Global guard: `Authorization: Bearer <token>` → a Principal. The token is hashed (sha256) and compared
 * with the QM_ADMIN_TOKEN hash, else looked up among stored token hashes through the TokenCache (valid and
 * unknown ones remembered for QM_TOKEN_CACHE_TTL_MS, so a burst of submissions, or of requests with a wrong
 * token, costs no extra round trip). Missing/invalid → 401, expired → 401 TOKEN_EXPIRED (its use is then not
 * recorded; a valid one's is, at most once a minute: TokenUsage);
 * a member on an @AdminOnly route → 403; an executor on any route not marked @ExecutorAllowed → 403.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  private readonly adminHash: Buffer;

  constructor(
    private readonly reflector: Reflector,
    @Inject(Config) config: Config,
    @Inject(TokenCache) private readonly tokens: TokenCache,
    @Inject(TokenUsage) private readonly usage: TokenUsage,
  ) {
    this.adminHash = Buffer.from(config.adminTokenHash, 'hex');
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean | undefined>(PUBLIC_ROUTE, targets)) return true;
    const request = context.switchToHttp().getRequest<RequestWithPrincipal & { headers: Record<string, string | string[] | undefined> }>();
    const principal = await this.authenticate(request.headers.authorization);
    request.principal = principal;
    if (principal.role === 'executor' && !this.reflector.getAllAndOverride<boolean | undefined>(EXECUTOR_ALLOWED, targets)) {
      throw new AppError('FORBIDDEN', `${principal.subject} is an executor token: it may only read its teams' jobs and report their status`);
    }
    if (principal.role !== 'admin' && this.reflector.getAllAndOverride<boolean | undefined>(ADMIN_ONLY, targets)) {
      throw new AppError('FORBIDDEN', `${principal.subject} is a ${principal.role}; this needs an admin token`);
    }
    return true;
  }

  private async authenticate(header: string | string[] | undefined): Promise<Principal> {
    if (typeof header !== 'string' || header === '') {
      throw new AppError('UNAUTHENTICATED', 'send Authorization: Bearer <token>');
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match?.[1]) throw new AppError('UNAUTHENTICATED', 'the Authorization header must be "Bearer <token>"');
    const hash = sha256Hex(match[1]);
    if (timingSafeEqual(Buffer.from(hash, 'hex'), this.adminHash)) {
      return { subject: 'admin', role: 'admin', teams: [], tokenId: null };
    }
    const principal = await this.tokens.lookup(hash);
    if (!principal) throw new AppError('UNAUTHENTICATED', 'the token is not valid (unknown or revoked)');
    if (principal.expiresAt != null && principal.expiresAt.getTime() <= Date.now()) {
      throw new AppError('TOKEN_EXPIRED', `the token of ${principal.subject} expired at ${principal.expiresAt.toISOString()}: ask an admin for a new one`);
    }
    if (principal.tokenId !== null) this.usage.used(principal.tokenId);
    return principal;
  }
}
