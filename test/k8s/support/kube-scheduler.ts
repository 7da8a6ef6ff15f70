// Starts a real kube-scheduler (built by test/k8s/controlplane/build.sh, found through QM_K8S_BIN) against
// the test control plane, with a given KubeSchedulerConfiguration. For tests of the scheduler config and
// of the extender. Leader election is off and the client connection is pointed at KUBECONFIG.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';

export interface RunningKubeScheduler {
  /** Everything it logged so far. */
  logs(): string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function ready(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    // kube-scheduler serves a self-signed certificate on its health port.
    const req = request({ host: '127.0.0.1', port, path: '/readyz', rejectUnauthorized: false, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/** `configYaml` is a KubeSchedulerConfiguration; `transform` may edit it (e.g. point the extender elsewhere). */
export async function startKubeScheduler(configYaml: string, transform: (config: Record<string, unknown>) => void = () => undefined): Promise<RunningKubeScheduler> {
  const bin = process.env.QM_K8S_BIN;
  const kubeconfig = process.env.KUBECONFIG;
  if (!bin || !kubeconfig) throw new Error('QM_K8S_BIN/KUBECONFIG not set: run through the k8s Jest project');
  const config = parse(configYaml) as Record<string, unknown>;
  config.clientConnection = { ...(config.clientConnection as object | undefined), kubeconfig };
  config.leaderElection = { leaderElect: false };
  transform(config);

  const dir = mkdtempSync(join(tmpdir(), 'qm-kube-scheduler-'));
  const configPath = join(dir, 'config.yaml');
  writeFileSync(configPath, stringify(config));
  const port = await freePort();
  const child = spawn(
    join(bin, 'kube-scheduler'),
    [
      '--config', configPath,
      '--authentication-kubeconfig', kubeconfig,
      '--authorization-kubeconfig', kubeconfig,
      '--bind-address', '127.0.0.1',
      '--secure-port', String(port),
      '--cert-dir', join(dir, 'certs'),
      '--v', '2',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => {
    exited = true;
    resolve();
  }));

  const stop = async (): Promise<void> => {
    if (!exited) child.kill('SIGTERM');
    await exit;
    rmSync(dir, { recursive: true, force: true });
  };

  for (let attempt = 0; attempt < 600; attempt++) {
    if (exited) {
      await stop();
      throw new Error(`kube-scheduler exited during start-up:\n${output.slice(-4000)}`);
    }
    if (await ready(port)) return { logs: () => output, stop };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stop();
  throw new Error(`kube-scheduler not ready after 60 s:\n${output.slice(-4000)}`);
}

export function readRepoFile(path: string): string {
  return readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');
}
