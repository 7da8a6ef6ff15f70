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

/** The namespace a REST job of `team` makes its pods in: the first of its namespaces. */
export function podsNamespace(team: string, listed: readonly string[]): string {
  return teamNamespaces(team, listed)[0]!;
}

/** What the cluster says about a namespace jobs' pods would go to. */
export interface JobsNamespaceFacts {
  /** The namespace of Quartermaster's own ServiceAccount and Secret (null: unknown). */
  ownNamespace: string | null;
  /** Quartermaster creates a missing team namespace (QM_KUBE_CREATE_NAMESPACES). */
  createNamespaces: boolean;
  exists: boolean;
}

/** The namespace holding Quartermaster's own credentials is never a jobs namespace: why `namespace` is it, or null. */
export function ownNamespaceRefusal(namespace: string, ownNamespace: string | null): string | null {
  if (ownNamespace === null || namespace !== ownNamespace) return null;
  return (
    `namespace ${namespace} is Quartermaster's own (its ServiceAccount and Secrets are there), so no job's pods may run in it; ` +
    `an admin gives the team another namespace (PATCH /v1/teams/{name} {"namespaces": [...]} or qm team set --namespaces)`
  );
}

/** Why a team's pods may not be made in `namespace` now, or null when they may. */
export function jobsNamespaceRefusal(namespace: string, facts: JobsNamespaceFacts): string | null {
  const own = ownNamespaceRefusal(namespace, facts.ownNamespace);
  if (own !== null) return own;
  if (facts.exists || facts.createNamespaces) return null;
  return (
    `namespace ${namespace} does not exist in the cluster; an admin creates it (labelled pod-security.kubernetes.io/enforce=restricted) ` +
    `or lets Quartermaster create the teams' namespaces (QM_KUBE_CREATE_NAMESPACES=true)`
  );
}

/**
 * The start-up check of Kubernetes mode: Quartermaster's own namespace may be no jobs namespace — not the one
 * REST jobs older than team namespaces use (`sharedNamespace`), not any team's. Each conflict, described.
 */
export function ownNamespaceConflicts(ownNamespace: string, sharedNamespace: string, teams: ReadonlyMap<string, readonly string[]>): string[] {
  const conflicts: string[] = [];
  if (sharedNamespace === ownNamespace) conflicts.push(`QM_KUBE_NAMESPACE is ${ownNamespace}`);
  for (const [team, listed] of [...teams].sort(([a], [b]) => a.localeCompare(b))) {
    if (teamNamespaces(team, listed).includes(ownNamespace)) conflicts.push(`team ${team}'s namespaces include ${ownNamespace}`);
  }
  return conflicts;
}

/** Pod Security Standards levels (pod-security.kubernetes.io/enforce). */
export const POD_SECURITY_LEVELS = ['privileged', 'baseline', 'restricted'] as const;
export type PodSecurityLevel = (typeof POD_SECURITY_LEVELS)[number];

/** The label that says which Pod Security level a namespace enforces. */
export const POD_SECURITY_ENFORCE_LABEL = 'pod-security.kubernetes.io/enforce';

/** The labels of a namespace Quartermaster creates for `team`: Pod Security enforced at `level`, warned and audited at restricted. */
export function teamNamespaceLabels(team: string, level: PodSecurityLevel): Record<string, string> {
  return {
    'app.kubernetes.io/managed-by': 'quartermaster',
    'quartermaster.io/team': team,
    [POD_SECURITY_ENFORCE_LABEL]: level,
    'pod-security.kubernetes.io/enforce-version': 'latest',
    'pod-security.kubernetes.io/warn': 'restricted',
    'pod-security.kubernetes.io/audit': 'restricted',
  };
}

/**
 * The team an accelerator pod that names none as a gang (no quartermaster.io/gang) is charged to: the one its
 * `quartermaster.io/team` label names, if that team takes pods from the pod's namespace; else the one team whose
 * namespaces include it. None, or several: a refusal saying how to fix it.
 */
export function namespaceTeam(namespace: string, teams: ReadonlyMap<string, readonly string[]>, labelled: string | undefined): { team: string } | { refusal: string } {
  if (labelled !== undefined && labelled !== '') {
    const listed = teams.get(labelled);
    if (listed === undefined) return { refusal: `quartermaster.io/team: unknown team ${labelled}` };
    const elsewhere = teamNamespaceRefusal(labelled, namespace, listed);
    return elsewhere === null ? { team: labelled } : { refusal: `quartermaster.io/team: ${elsewhere}` };
  }
  const owners = [...teams].filter(([team, listed]) => teamNamespaces(team, listed).includes(namespace)).map(([team]) => team).sort();
  if (owners.length === 1) return { team: owners[0]! };
  if (owners.length === 0) {
    return {
      refusal:
        `namespace ${namespace} belongs to no team, so its accelerator pods are charged to no quota; ` +
        `an admin adds it to a team's namespaces (qm team set TEAM --namespaces …), or the pod names its team (label quartermaster.io/team)`,
    };
  }
  return { refusal: `namespace ${namespace} belongs to several teams (${owners.join(', ')}); the pod names its team with the label quartermaster.io/team` };
}
