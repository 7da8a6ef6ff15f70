import { createParamDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';
import type { Principal } from './principal.js';

export const PUBLIC_ROUTE = 'qm:public';
export const ADMIN_ONLY = 'qm:admin-only';
export const EXECUTOR_ALLOWED = 'qm:executor-allowed';

/** No token needed (health checks). */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(PUBLIC_ROUTE, true);
/** Only the admin role; members get 403. */
export const AdminOnly = (): MethodDecorator & ClassDecorator => SetMetadata(ADMIN_ONLY, true);
/** One of the few routes an executor token may call (every other route answers it 403). */
export const ExecutorAllowed = (): MethodDecorator & ClassDecorator => SetMetadata(EXECUTOR_ALLOWED, true);

export interface RequestWithPrincipal {
  principal?: Principal;
}

/** The authenticated caller of this request. */
export const Caller = createParamDecorator((_data: unknown, ctx: ExecutionContext): Principal => {
  const req = ctx.switchToHttp().getRequest<RequestWithPrincipal>();
  if (!req.principal) throw new Error('Caller used on a route without authentication');
  return req.principal;
});
