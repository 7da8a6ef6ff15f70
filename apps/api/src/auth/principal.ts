export type Role = 'admin' | 'member';

/** Who is calling: resolved from the bearer token by AuthGuard and attached to the request. */
export interface Principal {
  subject: string;
  role: Role;
  /** Teams a member may act for; empty for admins (who may act for every team). */
  teams: readonly string[];
  /** Id of the stored token; null for the QM_ADMIN_TOKEN bootstrap admin. */
  tokenId: string | null;
}

export function isAdmin(p: Principal): boolean {
  return p.role === 'admin';
}

export function canActForTeam(p: Principal, team: string): boolean {
  return p.role === 'admin' || p.teams.includes(team);
}
