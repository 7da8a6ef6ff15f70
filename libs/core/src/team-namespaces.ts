/**
 * Which Kubernetes namespaces may charge a team: a pod or workload there that names the team
 * (quartermaster.io/team) is imported as its job. An admin lists them per team; none listed means the
 * namespace named as the team. Anyone who can create pods somewhere can write any team's name on them:
 * without this, a member of one team spends another's quota, budget and priority from a namespace of its own.
 */

/** The namespaces that may charge `team` (`listed` as stored: empty = the team's own name). */
export function teamNamespaces(team: string, listed: readonly string[]): string[] {
  return listed.length > 0 ? [...listed] : [team];
}

/** Why a workload in `namespace` may not name `team`, or null when it may. */
export function teamNamespaceRefusal(team: string, namespace: string, listed: readonly string[]): string | null {
  const allowed = teamNamespaces(team, listed);
  if (allowed.includes(namespace)) return null;
  return (
    `team ${team} does not take workloads from namespace ${namespace} (its namespaces: ${allowed.join(', ')}); ` +
    `an admin can add it with PATCH /v1/teams/${team} {"namespaces": [...]} or qm team set ${team} --namespaces`
  );
}
