// A REST job's template nodeSelector on a real API server: the node sync carries the Nodes' labels into
// Quartermaster, the job's pod is bound only to a node carrying every selected label (and selects them, so the
// kubelet admits it), a selector no node satisfies leaves the job pending with a reason naming the labels, and
// relabelling a Node lets it start there.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { eventually, gangBody, seedTenancy, startQm, type QmEnv } from './scheduler-harness.js';

const ZONE = 'topology.kubernetes.io/zone';
let qm: QmEnv;
let east: string;
let west: string;

interface NodeRow {
  name: string;
  flavor: string;
  labels: Record<string, string>;
}
interface JobView {
  state: string;
  pending: { code: string; message: string } | null;
}

const relabel = async (name: string, zone: string): Promise<void> => {
  await qm.core.patchNode({ name, body: { metadata: { labels: { [ZONE]: zone } } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  await eventually(`node ${name} synced with zone ${zone}`, async () => (((await qm.ok('GET', `/v1/nodes/${name}`)) as NodeRow).labels[ZONE] === zone ? true : undefined));
};
const submit = async (body: Record<string, unknown>): Promise<string> => ((await qm.ok('POST', '/v1/jobs', body)) as { id: string }).id;
const job = async (id: string): Promise<JobView> => (await qm.ok('GET', `/v1/jobs/${id}`)) as JobView;
const boundPods = (id: string, n: number): Promise<V1Pod[]> =>
  eventually(`${n} pod(s) of ${id} bound`, async () => {
    const pods = (await qm.jobPods(id)).filter((p) => p.spec?.nodeName && !p.metadata?.deletionTimestamp);
    return pods.length === n ? pods : undefined;
  });
const template = (nodeSelector: Record<string, string>): Record<string, unknown> => ({ image: 'busybox', command: ['sleep', '3600'], cpuMillis: 1000, memoryMiB: 1024, nodeSelector });

beforeAll(async () => {
  qm = await startQm('qm-nodesel', 2);
  await seedTenancy(qm);
  const rows = await eventually('4 nodes synced', async () => {
    const items = ((await qm.ok('GET', '/v1/nodes')) as { items: NodeRow[] }).items;
    return items.length === 4 ? items : undefined;
  });
  [east, west] = rows.filter((n) => n.flavor === 'h100').map((n) => n.name) as [string, string];
  await relabel(east, 'us-east-1a');
  await relabel(west, 'us-west-2b');
}, 30 * 60_000);

afterAll(async () => {
  await qm?.close();
}, 120_000);

describe('node selectors in Kubernetes', () => {
  it("binds the job's pods only to nodes carrying its labels; the pods select them with the flavor's", async () => {
    // The west node is the one best fit would not pick first (nodes sort by name; either way only one matches).
    for (const zone of ['us-west-2b', 'us-east-1a']) {
      const id = await submit(gangBody({ name: `in-${zone}`, replicas: 1, template: template({ [ZONE]: zone }) }));
      const [pod] = await boundPods(id, 1);
      expect(pod!.spec!.nodeName).toBe(zone === 'us-east-1a' ? east : west);
      expect(pod!.spec!.nodeSelector).toEqual({ [ZONE]: zone, 'nvidia.com/gpu.product': qm.h100Product });
      await qm.ok('DELETE', `/v1/jobs/${id}`);
      await eventually('pod gone', async () => ((await qm.jobPods(id)).length === 0 ? true : undefined));
    }
  }, 120_000);

  it('a selector no node satisfies waits with a reason naming the labels; relabelling a Node lets it start there', async () => {
    const id = await submit(gangBody({ name: 'central', replicas: 1, template: template({ [ZONE]: 'eu-central-1a' }) }));
    const waiting = await eventually('pending reason', async () => {
      const view = await job(id);
      return view.pending?.code === 'UNSATISFIABLE' ? view : undefined;
    });
    expect(waiting.pending!.message).toContain('needs 8 h100 on nodes labelled topology.kubernetes.io/zone=eu-central-1a (its nodeSelector); no schedulable h100 node carries that label');
    expect(await qm.jobPods(id)).toEqual([]);
    // Two replicas on the one west node's zone: the matching nodes are too few in all.
    const wide = await submit(gangBody({ name: 'wide', replicas: 2, template: template({ [ZONE]: 'us-west-2b' }) }));
    const tooFew = await eventually('pending reason', async () => ((await job(wide)).pending?.code === 'UNSATISFIABLE' ? job(wide) : undefined));
    expect(tooFew.pending!.message).toContain('the schedulable h100 nodes labelled so have 8 in all');
    await qm.ok('DELETE', `/v1/jobs/${wide}`);

    await relabel(east, 'eu-central-1a');
    const [pod] = await boundPods(id, 1);
    expect(pod!.spec!.nodeName).toBe(east);
    await qm.ok('DELETE', `/v1/jobs/${id}`);
  }, 120_000);
});
