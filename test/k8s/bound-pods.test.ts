// BoundPods (the bind checks' watched view of the pods on each node) against the real kube-apiserver: once
// the watch has delivered a pod, the view holds every pod bound before it — the property the bind's second
// check relies on (DESIGN rule 1 without a LIST per bind).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { pino } from 'pino';
import { KubeCluster } from '#kube';
import { BoundPods } from '../../apps/scheduler/src/kubernetes/bound-pods.js';
import { cleanUp, createNamespace, fakeNode, testKubeConfig, uniqueName } from './support/cluster.js';

const kc = testKubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const namespace = uniqueName('bound-pods');
const cluster = new KubeCluster(kc, { namespace });
const nodes = [uniqueName('bp-a'), uniqueName('bp-b')];

function pod(name: string, node: string | undefined): V1Pod {
  return {
    metadata: { name, namespace },
    spec: { ...(node ? { nodeName: node } : {}), containers: [{ name: 'c', image: 'x', resources: { limits: { 'nvidia.com/gpu': '1' } } }] },
  };
}

const names = (pods: readonly V1Pod[]): string[] => pods.map((p) => p.metadata!.name!).sort();

describe('BoundPods', () => {
  let view: BoundPods;

  beforeAll(async () => {
    await createNamespace(core, namespace);
    for (const name of nodes) await core.createNode({ body: fakeNode(name, { extended: { 'nvidia.com/gpu': '8' } }) });
    view = new BoundPods(cluster, pino({ level: 'silent' }));
  }, 60_000);

  afterAll(async () => {
    await view?.close();
    await cleanUp(core, namespace, nodes);
  }, 60_000);

  it('once a pod is seen, every pod bound before it is in the view, on its node; unbound and ended pods are not', async () => {
    expect(await view.ready()).toBe(true);
    // Many pods bound one after another (as other schedulers would), then ours: seeing ours means seeing them all.
    const before = Array.from({ length: 20 }, (_, i) => `before-${i}`);
    for (const [i, name] of before.entries()) await core.createNamespacedPod({ namespace, body: pod(name, nodes[i % 2]) });
    await core.createNamespacedPod({ namespace, body: pod('unbound', undefined) });
    const ours = await core.createNamespacedPod({ namespace, body: pod('ours', nodes[0]) });
    expect(await view.seen([ours.metadata!.uid!], 10_000)).toBe(true);
    expect(names(view.onNode(nodes[0]!))).toEqual([...before.filter((_, i) => i % 2 === 0), 'ours'].sort());
    expect(names(view.onNode(nodes[1]!))).toEqual(before.filter((_, i) => i % 2 === 1).sort());

    // A pod that ends or is deleted leaves the view; the next one seen proves it.
    await cluster.patchPodStatus('before-0', { phase: 'Succeeded' }, namespace);
    await core.deleteNamespacedPod({ namespace, name: 'before-1', gracePeriodSeconds: 0 });
    const next = await core.createNamespacedPod({ namespace, body: pod('next', nodes[1]) });
    expect(await view.seen([next.metadata!.uid!], 10_000)).toBe(true);
    expect(view.onNode(nodes[0]!).map((p) => p.metadata!.name)).not.toContain('before-0');
    expect(view.onNode(nodes[1]!).map((p) => p.metadata!.name)).not.toContain('before-1');
  }, 60_000);

  it('a pod that never comes is not seen: false after the timeout, and false at once once closed', async () => {
    expect(await view.seen(['no-such-uid'], 200)).toBe(false);
    const waiting = view.seen(['no-such-uid'], 60_000);
    await view.close();
    expect(await waiting).toBe(false);
    expect(await view.ready()).toBe(false);
  }, 30_000);
});
