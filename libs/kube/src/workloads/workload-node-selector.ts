import type { V1NodeSelectorRequirement, V1PodSpec } from '@kubernetes/client-node';
import type { KubeFlavor } from '../node-mapping.js';
import type { Derived } from './workload.js';

/**
 * The node labels a gang's pods require, as the core places by them (ADR 0017: a job's `nodeSelector`, node
 * labels equal to a value). Quartermaster binds the pods itself, so nothing else filters nodes for them: a pod
 * bound to a node its selector or required affinity does not match is refused by the kubelet. Read from each
 * member role's pod spec:
 * - every `nodeSelector` entry;
 * - required node affinity: with one term, an `In` expression with one value is the label `key=value`;
 * - any other expression (several values, `NotIn`, `Exists`, …, or several terms) only on keys that every
 *   acceptable flavor defines: the flavor choice decides those (podSpecFitsFlavor), the nodes of a flavor carry
 *   its labels. On other keys the core could not keep the gang off nodes that fail them: an issue.
 * The gang's selector is the union over its roles (the core's replicas are uniform, so every replica must fit
 * every role's); two roles asking for different values of a label are an issue. Pure.
 */
export function gangNodeSelector(
  specs: readonly (V1PodSpec | undefined)[],
  flavors: readonly KubeFlavor[],
): Derived<Record<string, string>> {
  const decidedByFlavor = (key: string): boolean =>
    flavors.length > 0 && flavors.every((f) => Object.hasOwn(f.nodeLabels ?? {}, key));
  const selector: Record<string, string> = {};
  const add = (key: string, value: string, field: string): Derived<null> => {
    if (Object.hasOwn(selector, key) && selector[key] !== value) {
      return {
        ok: false,
        field,
        message: `the gang's pods ask for ${key}=${selector[key]} and ${key}=${value}; Quartermaster places a gang's replicas on nodes that suit every pod`,
      };
    }
    selector[key] = value;
    return { ok: true, value: null };
  };
  for (const spec of specs) {
    for (const [key, value] of Object.entries(spec?.nodeSelector ?? {})) {
      const added = add(key, value, 'spec.nodeSelector');
      if (!added.ok) return added;
    }
    const terms = spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
    const field = 'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution';
    for (const term of terms) {
      if ((term.matchFields ?? []).length > 0) return unsupported(field, 'matchFields');
      for (const expression of term.matchExpressions ?? []) {
        if (decidedByFlavor(expression.key)) continue;
        const value = terms.length === 1 ? singleValue(expression) : null;
        if (value === null) return unsupported(field, describe(expression, terms.length));
        const added = add(expression.key, value, field);
        if (!added.ok) return added;
      }
    }
  }
  return { ok: true, value: selector };
}

function singleValue(expression: V1NodeSelectorRequirement): string | null {
  return expression.operator === 'In' && expression.values?.length === 1 ? expression.values[0]! : null;
}

function describe(expression: V1NodeSelectorRequirement, terms: number): string {
  const values = expression.values?.length ? ` ${expression.values.join(',')}` : '';
  return `${expression.key} ${expression.operator}${values}${terms > 1 ? ` (in one of ${terms} alternative terms)` : ''}`;
}

function unsupported(field: string, what: string): Derived<never> {
  return {
    ok: false,
    field,
    message:
      `Quartermaster places gangs by node labels equal to a value and cannot hold the pods to ${what}: ` +
      'use nodeSelector, or one term whose expressions are In with one value (keys the flavors define may use any operator)',
  };
}
