import { forbidden } from '#common';
import { canActForTeam, type Principal } from '../auth/principal.js';

/**
 * The teams whose jobs a caller may see: undefined (all) for admins, the member's teams otherwise.
 * Asking for one team the caller may not act for is a 403, as on GET /v1/jobs.
 */
export function visibleTeams(caller: Principal, team?: string): readonly string[] | undefined {
  if (team !== undefined && !canActForTeam(caller, team))
    throw forbidden(`${caller.subject} may not see jobs of team ${team}`);
  return caller.role === 'admin' ? undefined : caller.teams;
}
