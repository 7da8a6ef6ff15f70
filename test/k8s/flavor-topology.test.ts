// Per-flavor topology label keys: a TPU flavor reads its slices from GKE's labels (node pool and
// gke-tpu-topology) by default, so a `tpuShape: 2x4` job lands on real TPU nodes; a flavor's keys set over
// REST change what the node sync reads; a shape no node has is reported with the labels it was looked for in.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fakeNode, uniqueName } from './support/cluster.js';
import { eventually, seedTenancy, startQm, type QmEnv } from './scheduler-harness.js';

let qm: QmEnv;
let accelerator: string;
/** pool → its nodes: two hosts of a 2x4 v5e slice (4 chips each), and one single-host 2x2 slice. */
const pools: Record<string, string[]> = {};

type NodeRow = { name: string; flavor: string; topology: { domain?: string; tpuShape?: string; block?: string } };
const node = async (name: string): Promise<NodeRow> => (await qm.ok('GET', `/v1/nodes/${name}`)) as NodeRow;

beforeAll(async () => {
  qm = await startQm('qm-topo', 0);
  await seedTenancy(qm);
  accelerator = uniqueName('tpu-v5-lite-podslice');
  for (const [pool, shape, hosts] of [
    [uniqueName('slice-a'), '2x4', 2],
    [uniqueName('slice-b'), '2x2', 1],
  ] as const) {
    pools[pool] = [];
    for (let i = 0; i < hosts; i++) {
      const name = uniqueName(`${pool}-host-${i}`);
      // As GKE labels the hosts of a multi-host TPU slice node pool.
      await qm.core.createNode({
        body: fakeNode(name, {
          labels: {
            'cloud.google.com/gke-nodepool': pool,
            'cloud.google.com/gke-tpu-accelerator': accelerator,
            'cloud.google.com/gke-tpu-topology': shape,
            'example.com/slice': `custom-${pool}`,
          },
          extended: { 'google.com/tpu': '4' },
        }),
      });
      qm.nodes.push(name);
      pools[pool].push(name);
    }
  }
  await qm.ok('PUT', '/v1/flavors/v5e', { kind: 'google-tpu', nodeLabels: { 'cloud.google.com/gke-tpu-accelerator': accelerator } });
  await qm.ok('PUT', '/v1/teams/vision/quotas/v5e', { nominal: 32, borrowingLimit: 0, lendingLimit: null });
}, 180_000);

afterAll(async () => {
  await qm?.close();
}, 120_000);

describe('per-flavor topology labels', () => {
  it("a google-tpu flavor reads slices from GKE's node pool and gke-tpu-topology labels by default", async () => {
    const flavor = (await qm.ok('GET', '/v1/flavors/v5e')) as { topologyLabels: Record<string, string> };
    expect(flavor.topologyLabels).toMatchObject({ domain: 'cloud.google.com/gke-nodepool', tpuShape: 'cloud.google.com/gke-tpu-topology' });
    const [a] = Object.keys(pools);
    await eventually('TPU hosts synced with their slice', async () => {
      const row = await node(pools[a!]![0]!);
      return row.topology.domain === a && row.topology.tpuShape === '2x4' ? true : undefined;
    });

    const job = (await qm.ok('POST', '/v1/jobs', {
      name: 'tpu-2x4',
      team: 'vision',
      replicas: 2,
      acceleratorsPerReplica: 4,
      flavors: ['v5e'],
      topology: { tpuShape: '2x4' },
      template: { image: 'us-docker.pkg.dev/acme/maxtext:1', cpuMillis: 1000, memoryMiB: 1024 },
    })) as { id: string };
    const bound = await eventually('2x4 slice bound', async () => {
      const pods = await qm.jobPods(job.id);
      return pods.length === 2 && pods.every((p) => p.spec?.nodeName) ? pods.map((p) => p.spec!.nodeName!).sort() : undefined;
    });
    expect(bound).toEqual([...pools[a!]!].sort());
    await qm.ok('DELETE', `/v1/jobs/${job.id}`);
    await eventually('slice pods gone', async () => ((await qm.jobPods(job.id)).length === 0 ? true : undefined));
  }, 120_000);

  it("keys set over REST are what the node sync reads; a shape no node has names the flavor's labels", async () => {
    const [a] = Object.keys(pools);
    const host = pools[a!]![0]!;
    const put = (await qm.ok('PUT', '/v1/flavors/v5e', {
      kind: 'google-tpu',
      nodeLabels: { 'cloud.google.com/gke-tpu-accelerator': accelerator },
      topologyLabels: { domain: 'example.com/slice' },
    })) as { topologyLabels: Record<string, string> };
    expect(put.topologyLabels).toMatchObject({ domain: 'example.com/slice', tpuShape: 'cloud.google.com/gke-tpu-topology' });
    await eventually('node sync reads the new key', async () => ((await node(host)).topology.domain === `custom-${a}` ? true : undefined));

    const job = (await qm.ok('POST', '/v1/jobs', {
      name: 'tpu-4x4',
      team: 'vision',
      replicas: 2,
      acceleratorsPerReplica: 4,
      flavors: ['v5e'],
      topology: { tpuShape: '4x4' },
      template: { image: 'us-docker.pkg.dev/acme/maxtext:1' },
    })) as { id: string };
    const pending = await eventually('judged', async () => {
      const j = (await qm.ok('GET', `/v1/jobs/${job.id}`)) as { state: string; pending: { code: string | null; message: string } | null };
      return j.state !== 'PENDING' || j.pending?.code ? j : undefined;
    });
    expect(pending).toMatchObject({ state: 'PENDING', pending: { code: 'UNSATISFIABLE' } });
    expect(pending.pending!.message).toContain('no schedulable v5e node has a TPU slice of shape 4x4 (nodes with the same example.com/slice and cloud.google.com/gke-tpu-topology=4x4)');
    await qm.ok('DELETE', `/v1/jobs/${job.id}`);

    // Back to the defaults: the node pool again.
    await qm.ok('PUT', '/v1/flavors/v5e', { kind: 'google-tpu', nodeLabels: { 'cloud.google.com/gke-tpu-accelerator': accelerator } });
    await eventually('node sync reads the default key again', async () => ((await node(host)).topology.domain === a ? true : undefined));
  }, 120_000);
});
