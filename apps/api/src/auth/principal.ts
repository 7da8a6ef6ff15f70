/** admin: everything; member: its teams' jobs; executor: reads its teams' jobs and reports their status, nothing else. */
export type Role = 'admin' | 'member' | 'executor';

/** Who is calling: resolved from the bearer token by AuthGuard and attached to the request. */
export interface Principal {
  subject: string;
  role: Role;
  /** Teams a member may act for; empty for admins (who may act for every team). */
  teams: readonly string[];
  /** Id of the stored token; null for the QM_ADMIN_TOKEN bootstrap admin. */
  tokenId: string | null;
  /** When the stored token stops being accepted (401 TOKEN_EXPIRED from then on); null or absent: never. */
  expiresAt?: Date | null;
}

export function isAdmin(p: Principal): boolean {
  return p.role === 'admin';
}

/** Submit, cancel, read usage: admins, and members of the team. */
export function canActForTeam(p: Principal, team: string): boolean {
  return p.role === 'admin' || (p.role === 'member' && p.teams.includes(team));
}

/** Read the team's jobs: admins, its members and its executors. */
export function canReadTeam(p: Principal, team: string): boolean {
  return p.role === 'admin' || p.teams.includes(team);
}

/** Report a job's state (POST /v1/jobs/{id}/status): admins, and the team's executors. */
export function canReportForTeam(p: Principal, team: string): boolean {
  return p.role === 'admin' || (p.role === 'executor' && p.teams.includes(team));
}

/**
 * Whose Idempotency-Keys a caller's are among: its token's unique id (the QM_ADMIN_TOKEN has none and a
 * scope of its own). Never the subject, a free-text name two tokens may share: tokens named "sam" in two
 * teams shared keys, and the 409 named the other team's job.
 */
export function idempotencyScope(p: Principal): string {
  return p.tokenId === null ? 'bootstrap-admin' : `token:${p.tokenId}`;
}
