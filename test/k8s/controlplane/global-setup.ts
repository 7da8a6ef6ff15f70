// Jest globalSetup of the `k8s` project: builds the control plane if needed (build.sh, cached), starts
// etcd + kube-apiserver once for the whole run (start.sh) and exports KUBECONFIG to the test workers.
// Set QM_K8S_KUBECONFIG to run the tests against a control plane you started yourself (`npm run k8s:start`).
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** Set (in the Jest parent process) to the state directory of the control plane this run started. */
export const STARTED_DIR_ENV = 'QM_K8S_STARTED_DIR';

/** Runs a script of this directory and returns the last line it printed on stdout. */
function runScript(script: string): string {
  const result = spawnSync('bash', [join(here, script)], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  if (result.error) throw result.error;
  const last = result.stdout.trim().split('\n').pop() ?? '';
  if (result.status !== 0 || !last) {
    throw new Error(`test/k8s/controlplane/${script} failed with exit code ${String(result.status)} (see its output above)`);
  }
  return last;
}

function startOnce(): SpawnSyncReturns<string> {
  return spawnSync('bash', [join(here, 'start.sh'), '--watch-pid', String(process.pid)], {
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
}

export default function globalSetup(): void {
  // Binaries first (cached after the first build): tests that start their own kube-scheduler or render the
  // Helm chart find them through QM_K8S_BIN and QM_HELM.
  process.env.QM_K8S_BIN = runScript('build.sh');
  process.env.QM_HELM = runScript('build-helm.sh');
  // The upstream workload controllers too (cached; the first build of all five takes 15-30 min on a busy
  // 2-core machine): built here, with no timeout, rather than inside a test hook that has one.
  const controllers = spawnSync('bash', [join(here, '..', 'controllers', 'build.sh'), 'all'], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (controllers.error) throw controllers.error;
  if (controllers.status !== 0) {
    throw new Error(`test/k8s/controllers/build.sh all failed with exit code ${String(controllers.status)} (see its output above)`);
  }
  const external = process.env.QM_K8S_KUBECONFIG;
  if (external) {
    process.env.KUBECONFIG = external;
    return;
  }
  // Free ports are picked, released, then bound by etcd/kube-apiserver: another process may take one in
  // between. A failed start cleans up after itself, so simply try again (three attempts in all).
  let result = startOnce();
  for (let attempt = 2; attempt <= 3 && result.status !== 0 && !result.error; attempt++) {
    process.stderr.write(`test/k8s/controlplane/start.sh failed; attempt ${attempt} of 3\n`);
    result = startOnce();
  }
  if (result.error) throw result.error;
  if (result.status !== 0) {
    throw new Error(`test/k8s/controlplane/start.sh failed with exit code ${String(result.status)} (see its output above)`);
  }
  const dir = result.stdout.trim().split('\n').pop() ?? '';
  if (!dir) throw new Error('test/k8s/controlplane/start.sh printed no state directory');
  process.env.KUBECONFIG = join(dir, 'kubeconfig');
  process.env.QM_K8S_DIR = dir;
  process.env[STARTED_DIR_ENV] = dir;
}
