import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { KubeCluster } from '#kube';
import { createTestDatabase } from '../../libs/db/src/testing/test-database.js';
import { SERVICE_FROM_SOURCES, startService } from '../e2e/service.js';
import { ADMIN, kubeTestEnv } from '../../test/k8s/scheduler-harness.js';
import { chartServiceAccount } from '../../test/k8s/support/chart-rbac.js';
import { cleanUp, createNamespace, uniqueName } from '../../test/k8s/support/cluster.js';

/** What the bench needs of a running Quartermaster (and seedTenancy of it). */
export interface QmService {
  namespace: string;
  h100Product: string;
  a100Product: string;
  /** The bench's view of the cluster, in Quartermaster's namespace. */
  cluster: KubeCluster;
  ok(method: string, path: string, body?: unknown): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * Quartermaster as deployed, in a process of its own — `npm start` (API + scheduler + worker, Kubernetes mode),
 * acting as the Helm chart's ServiceAccount, on its own test database — as kube-scheduler runs in its own: the
 * bench's client (its REST submissions, its watch of the pods) no longer shares Quartermaster's one thread.
 */
export async function startQmService(
  kc: KubeConfig,
  label: string,
  extraEnv: Record<string, string>,
  fleet: { h100Product: string; a100Product: string },
): Promise<QmService> {
  const core = kc.makeApiClient(CoreV1Api);
  const namespace = uniqueName(label);
  await createNamespace(core, namespace);
  const identity = await chartServiceAccount(kc, namespace);
  const db = await createTestDatabase({ label: label.replace(/-/g, '_') });
  let service: Awaited<ReturnType<typeof startService>> | null = null;
  const close = async (): Promise<void> => {
    await service?.stop();
    await cleanUp(core, namespace, []);
    await identity.cleanUp();
    await db.drop();
  };
  try {
    service = await startService(
      {
        ...kubeTestEnv(label, namespace),
        KUBECONFIG: identity.kubeconfigPath,
        DATABASE_URL: db.url,
        ...extraEnv,
      },
      undefined,
      SERVICE_FROM_SOURCES,
    );
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
  const url = service.url;
  return {
    namespace,
    ...fleet,
    cluster: new KubeCluster(kc, { namespace }),
    async ok(method, path, body) {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${ADMIN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${text}`);
      return text ? (JSON.parse(text) as unknown) : null;
    },
    close,
  };
}
