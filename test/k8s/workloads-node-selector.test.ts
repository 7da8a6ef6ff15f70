// A workload gang whose pods select nodes (nodeSelector, or a required node affinity In one value) is placed by
// the core only on nodes carrying those labels (ADR 0017): Quartermaster binds the pods itself, so nothing else
// filters nodes for them, and the kubelet would refuse a pod bound to a node its selector does not match. A
// required affinity the core cannot hold the pods to is refused with its reason on the pods.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { BatchV1Api, PatchStrategy, setHeaderOptions, type V1Pod, type V1PodSpec } from '@kubernetes/client-node';
import type { RunningControllers } from './controllers/controllers.js';
import { eventually, type QmEnv } from './scheduler-harness.js';
import { applyManifest, boundPods, podsOf, scheduledCondition, startWorkloadSuite, stopWorkloadSuite, workloadJob } from './support/workloads.js';

const ZONE = 'topology.kubernetes.io/zone';
let controllers: RunningControllers;
let qm: QmEnv;
/** The h100 nodes by name: the first in zone a, the other two in zone b. */
let first: string;
let rest: string[];

beforeAll(async () => {
  ({ qm, controllers } = await startWorkloadSuite('wl-nodesel', ['kube-controller-manager'], 3, 0));
  const h100 = qm.nodes.filter((name) => name.includes('-h100-')).sort();
  [first, ...rest] = h100 as [string, ...string[]];
  for (const [name, zone] of [[first, 'zone-a'], ...rest.map((n) => [n, 'zone-b'])] as [string, string][]) {
    await qm.core.patchNode({ name, body: { metadata: { labels: { [ZONE]: zone } } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    await eventually(`node ${name} synced in ${zone}`, async () =>
      ((await qm.ok('GET', `/v1/nodes/${name}`)) as { labels: Record<string, string> }).labels[ZONE] === zone ? true : undefined,
    );
  }
}, 30 * 60_000);

afterAll(() => stopWorkloadSuite({ qm, controllers }), 120_000);

/** A Job of `pods` pods × 8 h100 for team nlp, whose pod spec carries `select`. */
function job(name: string, pods: number, select: Partial<V1PodSpec>) {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, labels: { 'quartermaster.io/team': 'nlp' }, annotations: { 'quartermaster.io/flavors': 'h100' } },
    spec: {
      parallelism: pods,
      completions: pods,
      completionMode: 'Indexed',
      template: {
        spec: {
          schedulerName: 'quartermaster',
          restartPolicy: 'Never',
          containers: [{ name: 'c', image: 'busybox', resources: { limits: { 'nvidia.com/gpu': '8' } } }],
          ...select,
        },
      },
    },
  };
}

const zoneAffinity = (zone: string): Partial<V1PodSpec> => ({
  affinity: {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [{ matchExpressions: [{ key: ZONE, operator: 'In', values: [zone] }] }],
      },
    },
  },
});

async function boundOnce(name: string, pods: number): Promise<V1Pod[]> {
  const gang = await workloadJob(qm, 'Job', name, (j) => j.state === 'BINDING' || j.state === 'RUNNING');
  return eventually(`${pods} pod(s) of ${name} bound`, async () => {
    const bound = await boundPods(qm, gang.id);
    return bound.length === pods ? bound : undefined;
  });
}

async function finish(name: string): Promise<void> {
  // Each case's Job goes before the next: its pods free their nodes.
  await qm.cluster.kubeConfig.makeApiClient(BatchV1Api).deleteNamespacedJob({ name, namespace: qm.namespace, propagationPolicy: 'Background' });
  await eventually(`${name}'s pods gone`, async () => ((await podsOf(qm, `job-name=${name}`)).length === 0 ? true : undefined));
}

describe('workload gangs with node selectors', () => {
  it('binds a Job whose pods select zone b (nodeSelector) only to zone-b nodes, and one selecting zone a only to zone a', async () => {
    await applyManifest(qm, job('in-b', 2, { nodeSelector: { [ZONE]: 'zone-b' } }));
    const inB = await boundOnce('in-b', 2);
    expect(inB.map((p) => p.spec!.nodeName).sort()).toEqual([...rest].sort());
    const { id } = await workloadJob(qm, 'Job', 'in-b');
    expect(((await qm.ok('GET', `/v1/jobs/${id}`)) as { template: { nodeSelector?: Record<string, string> } }).template.nodeSelector).toEqual({ [ZONE]: 'zone-b' });
    await finish('in-b');

    await applyManifest(qm, job('in-a', 1, zoneAffinity('zone-a')));
    const [inA] = await boundOnce('in-a', 1);
    expect(inA!.spec!.nodeName).toBe(first);
    await finish('in-a');
  }, 300_000);

  it('a gang larger than its zone waits, UNSATISFIABLE, naming the labels', async () => {
    await applyManifest(qm, job('too-big', 2, { nodeSelector: { [ZONE]: 'zone-a' } }));
    const waiting = await workloadJob(qm, 'Job', 'too-big', (j) => j.pending?.code === 'UNSATISFIABLE');
    expect(waiting.pending!.message).toContain(`on nodes labelled ${ZONE}=zone-a (its nodeSelector)`);
    expect((await podsOf(qm, 'job-name=too-big')).filter((p) => p.spec?.nodeName)).toEqual([]);
    await finish('too-big');
  }, 300_000);

  it('a required affinity the core cannot hold the pods to is refused, the reason on the pods', async () => {
    await applyManifest(qm, job('pool', 1, { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'Exists' }] }] } } } }));
    const condition = await eventually('the pod says why', async () => {
      const [pod] = await podsOf(qm, 'job-name=pool');
      const c = pod ? scheduledCondition(pod) : undefined;
      return c?.reason === 'InvalidWorkload' ? c : undefined;
    });
    expect(condition.message).toContain('spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution');
    expect(condition.message).toContain('pool Exists');
    await finish('pool');
  }, 300_000);
});
