import { describe, expect, it } from '@jest/globals';
import type { V1Node, V1PodSpec } from '@kubernetes/client-node';
import { nodeConstraintRefusal } from './node-constraints.js';

const node: V1Node = {
  metadata: { name: 'gpu-1', labels: { 'nvidia.com/gpu.product': 'H100', zone: 'a', 'cpu-count': '96' } },
  spec: { taints: [{ key: 'nvidia.com/gpu', effect: 'NoSchedule' }, { key: 'team', value: 'vision', effect: 'NoSchedule' }, { key: 'soft', effect: 'PreferNoSchedule' }] },
};
const tolerating: V1PodSpec['tolerations'] = [{ key: 'nvidia.com/gpu', operator: 'Exists' }, { key: 'team', operator: 'Equal', value: 'vision', effect: 'NoSchedule' }];
const spec = (extra: Partial<V1PodSpec> = {}): V1PodSpec => ({ containers: [{ name: 'c' }], tolerations: tolerating, ...extra });

describe("a pod's own placement rules against a node", () => {
  it('allow a pod that selects the node and tolerates its NoSchedule taints (PreferNoSchedule never refuses)', () => {
    expect(nodeConstraintRefusal(spec({ nodeSelector: { zone: 'a' } }), node)).toBeNull();
    expect(nodeConstraintRefusal(spec({ tolerations: [{ operator: 'Exists' }] }), node)).toBeNull();
  });

  it('refuse an untolerated taint, a nodeSelector that does not match, a cordoned node', () => {
    expect(nodeConstraintRefusal(spec({ tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists' }] }), node)).toBe("the pod does not tolerate node gpu-1's taint team=vision:NoSchedule");
    expect(nodeConstraintRefusal(spec({ tolerations: [...tolerating.slice(0, 1), { key: 'team', operator: 'Equal', value: 'nlp' }] }), node)).toMatch(/team=vision/);
    expect(nodeConstraintRefusal(spec({ nodeSelector: { zone: 'b' } }), node)).toBe("the pod's nodeSelector zone=b does not match node gpu-1");
    expect(nodeConstraintRefusal(spec({ nodeSelector: { rack: '7' } }), node)).toMatch(/rack=7/);
    expect(nodeConstraintRefusal(spec(), { ...node, spec: { ...node.spec, unschedulable: true } })).toBe('node gpu-1 is cordoned (unschedulable)');
    expect(nodeConstraintRefusal(spec({ nodeName: 'gpu-2' }), node)).toBe('the pod names node gpu-2');
  });

  it('evaluate required node affinity strictly: one term must hold whole; an absent label satisfies only NotIn and DoesNotExist', () => {
    const affinity = (...terms: { key: string; operator: string; values?: string[] }[][]): Partial<V1PodSpec> => ({
      affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms.map((matchExpressions) => ({ matchExpressions })) } } },
    });
    expect(nodeConstraintRefusal(spec(affinity([{ key: 'zone', operator: 'In', values: ['a', 'b'] }, { key: 'cpu-count', operator: 'Gt', values: ['64'] }])), node)).toBeNull();
    expect(nodeConstraintRefusal(spec(affinity([{ key: 'zone', operator: 'In', values: ['b'] }], [{ key: 'rack', operator: 'DoesNotExist' }])), node)).toBeNull();
    expect(nodeConstraintRefusal(spec(affinity([{ key: 'rack', operator: 'In', values: ['7'] }])), node)).toBe("the pod's required node affinity does not match node gpu-1");
    expect(nodeConstraintRefusal(spec(affinity([{ key: 'rack', operator: 'Exists' }])), node)).not.toBeNull();
    expect(nodeConstraintRefusal(spec(affinity([{ key: 'zone', operator: 'NotIn', values: ['a'] }])), node)).not.toBeNull();
    expect(nodeConstraintRefusal(spec(affinity([{ key: 'cpu-count', operator: 'Lt', values: ['x'] }])), node)).not.toBeNull();
    const byName: Partial<V1PodSpec> = { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['gpu-2'] }] }] } } } };
    expect(nodeConstraintRefusal(spec(byName), node)).not.toBeNull();
  });
});
