import type { V1Node, V1NodeSelectorRequirement, V1PodSpec, V1Taint, V1Toleration } from '@kubernetes/client-node';

/**
 * Whether a pod may be placed on a node by its own rules, as kube-scheduler's NodeUnschedulable, NodeName,
 * NodeAffinity (nodeSelector and required node affinity) and TaintToleration filters judge them. The extender's
 * `bind` asks this of a pod that is not Quartermaster's before it binds it: whoever calls the verb must not place a
 * pod where its own spec, or the node's taints, say it may not go. Pure.
 */
export function nodeConstraintRefusal(spec: V1PodSpec | undefined, node: V1Node): string | null {
  const name = node.metadata?.name ?? '';
  const labels = node.metadata?.labels ?? {};
  const tolerations = spec?.tolerations ?? [];
  if (spec?.nodeName && spec.nodeName !== name) return `the pod names node ${spec.nodeName}`;
  if (node.spec?.unschedulable && !tolerations.some((t) => tolerates(t, { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }))) {
    return `node ${name} is cordoned (unschedulable)`;
  }
  for (const [key, value] of Object.entries(spec?.nodeSelector ?? {})) {
    if (labels[key] !== value) return `the pod's nodeSelector ${key}=${value} does not match node ${name}`;
  }
  const terms = spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (terms !== undefined && terms.length > 0) {
    const fits = terms.some(
      (term) =>
        ((term.matchExpressions ?? []).length > 0 || (term.matchFields ?? []).length > 0) &&
        (term.matchExpressions ?? []).every((e) => holds(e, labels[e.key])) &&
        (term.matchFields ?? []).every((e) => e.key === 'metadata.name' && holds(e, name)),
    );
    if (!fits) return `the pod's required node affinity does not match node ${name}`;
  }
  const untolerated = (node.spec?.taints ?? []).find((taint) => (taint.effect === 'NoSchedule' || taint.effect === 'NoExecute') && !tolerations.some((t) => tolerates(t, taint)));
  if (untolerated) return `the pod does not tolerate node ${name}'s taint ${untolerated.key}${untolerated.value ? `=${untolerated.value}` : ''}:${untolerated.effect}`;
  return null;
}

/** A node selector requirement against the value (undefined: the label is absent). */
function holds(requirement: V1NodeSelectorRequirement, value: string | undefined): boolean {
  const values = requirement.values ?? [];
  switch (requirement.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt': {
      if (value === undefined || !/^-?\d+$/.test(value) || !/^-?\d+$/.test(values[0] ?? '')) return false;
      return requirement.operator === 'Gt' ? Number(value) > Number(values[0]) : Number(value) < Number(values[0]);
    }
    default:
      return false;
  }
}

/** Kubernetes' toleration matching: an empty key with Exists tolerates every taint; an empty effect every effect. */
function tolerates(toleration: V1Toleration, taint: Pick<V1Taint, 'key' | 'value' | 'effect'>): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  if (toleration.key === undefined || toleration.key === '') return toleration.operator === 'Exists';
  if (toleration.key !== taint.key) return false;
  return toleration.operator === 'Exists' || (toleration.value ?? '') === (taint.value ?? '');
}
