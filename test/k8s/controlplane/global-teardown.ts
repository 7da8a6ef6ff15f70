// Jest globalTeardown of the `k8s` project: stops the control plane started by global-setup.ts and removes
// its temp directory. QM_K8S_KEEP=1 keeps the directory (logs, etcd data) for a look after a failure.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

export default function globalTeardown(): void {
  // Same process as globalSetup, which recorded the directory here (QM_K8S_STARTED_DIR).
  const dir = process.env.QM_K8S_STARTED_DIR;
  if (!dir) return;
  const args = [join(here, 'stop.sh'), dir];
  if (process.env.QM_K8S_KEEP === '1') args.push('--keep');
  const result = spawnSync('bash', args, { stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`test/k8s/controlplane/stop.sh ${dir} failed`);
  delete process.env.QM_K8S_STARTED_DIR;
}
