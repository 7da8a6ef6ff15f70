import type { V1NodeSelectorRequirement, V1PodSpec } from '@kubernetes/client-node';
import type { KubeFlavor } from '../node-mapping.js';

/**
 * Whether a pod spec can run on a flavor's nodes, judged from the labels the flavor selects its nodes by:
 * every nodeSelector entry and, for at least one required node-affinity term, every expression must
 * hold for the keys the flavor defines (keys it does not define cannot rule it out).
 */
export function podSpecFitsFlavor(spec: V1PodSpec | undefined, flavor: KubeFlavor): boolean {
  const labels = flavor.nodeLabels ?? {};
  for (const [key, value] of Object.entries(spec?.nodeSelector ?? {})) {
    if (Object.hasOwn(labels, key) && labels[key] !== value) return false;
  }
  const terms =
    spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  if (terms.length === 0) return true;
  return terms.some((term) =>
    (term.matchExpressions ?? []).every((expression) => expressionAllows(expression, labels)),
  );
}

function expressionAllows(expression: V1NodeSelectorRequirement, labels: Record<string, string>): boolean {
  if (!Object.hasOwn(labels, expression.key)) return true;
  const value = labels[expression.key]!;
  const values = expression.values ?? [];
  switch (expression.operator) {
    case 'In':
      return values.includes(value);
    case 'NotIn':
      return !values.includes(value);
    case 'Exists':
      return true;
    case 'DoesNotExist':
      return false;
    case 'Gt':
      return Number(value) > Number(values[0]);
    case 'Lt':
      return Number(value) < Number(values[0]);
    default:
      return true;
  }
}

/** The extended resources of known flavors a pod spec asks for (requests or limits of any container). */
export function acceleratorResourcesOf(
  spec: V1PodSpec | undefined,
  flavors: readonly KubeFlavor[],
): string[] {
  const known = new Set(flavors.map((f) => f.resourceName));
  const containers = [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])];
  const asked = new Set(
    containers.flatMap((c) => [
      ...Object.keys(c.resources?.requests ?? {}),
      ...Object.keys(c.resources?.limits ?? {}),
    ]),
  );
  return [...asked].filter((r) => known.has(r)).sort();
}

/** True when the pod spec asks for devices through DRA ResourceClaims (pod-level claims or container claims). */
export function requestsResourceClaims(spec: V1PodSpec | undefined): boolean {
  if ((spec?.resourceClaims ?? []).length > 0) return true;
  return [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])].some(
    (c) => (c.resources?.claims ?? []).length > 0,
  );
}

/** Why a gang whose pods ask for devices only through DRA ResourceClaims is not scheduled (ADR 0015). */
export function draOnlyMessage(flavors: readonly KubeFlavor[]): string {
  return (
    'asks for devices only through DRA ResourceClaims; Quartermaster counts accelerators as extended resources ' +
    `(${[...new Set(flavors.map((f) => f.resourceName))].join(', ') || 'nvidia.com/gpu, …'}) and cannot place or charge this gang — request them as resources.limits (see docs/adr/0015-workload-gangs-upstream-workload-api-and-dra.md)`
  );
}
