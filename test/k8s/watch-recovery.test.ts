// KubeCluster watches survive the API server going away: on a control plane of its own (so the shared
// one is not disturbed), the kube-apiserver is killed and started again; the node watch reports the
// failure, restarts with backoff, and sees objects created afterwards.
import { execFile, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api, KubeConfig, type V1Node } from '@kubernetes/client-node';
import { KubeCluster, type KubeApiError } from '#kube';
import { fakeNode } from './support/cluster.js';

const run = promisify(execFile);
const scripts = new URL('./controlplane/', import.meta.url).pathname;

async function eventually<T>(check: () => T | undefined): Promise<T> {
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('watch recovery when the API server restarts', () => {
  let dir = '';
  let kc: KubeConfig;

  beforeAll(() => {
    const started = spawnSync('bash', [join(scripts, 'start.sh'), '--watch-pid', String(process.pid)], { encoding: 'utf8' });
    if (started.status !== 0) throw new Error(`start.sh failed:\n${started.stderr}`);
    dir = started.stdout.trim().split('\n').pop()!;
    kc = new KubeConfig();
    kc.loadFromFile(join(dir, 'kubeconfig'));
  }, 180_000);

  afterAll(() => {
    if (dir) spawnSync('bash', [join(scripts, 'stop.sh'), dir], { stdio: 'inherit' });
  }, 60_000);

  it('reports the failure, restarts the watch and keeps delivering events', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNode({ body: fakeNode('before', { extended: { 'nvidia.com/gpu': '8' } }) });
    const added: string[] = [];
    const errors: KubeApiError[] = [];
    const watch = await new KubeCluster(kc).watchNodes({
      onAdd: (node: V1Node) => added.push(node.metadata!.name!),
      onError: (error) => errors.push(error),
    });
    try {
      expect(added).toEqual(['before']);
      await run('bash', [join(scripts, 'restart-component.sh'), dir, 'kube-apiserver', '--down-seconds', '2']);
      await eventually(() => (errors.length > 0 ? true : undefined));
      expect(errors[0]!.message).toMatch(/^watch nodes failed/);

      await core.createNode({ body: fakeNode('after', { extended: { 'nvidia.com/gpu': '8' } }) });
      await eventually(() => (added.includes('after') ? true : undefined));
      expect(watch.list().map((node) => node.metadata?.name).sort()).toEqual(['after', 'before']);
    } finally {
      await watch.stop();
    }
  }, 120_000);
});
