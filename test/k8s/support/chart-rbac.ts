// Runs Quartermaster in the k8s suites as the Helm chart's ServiceAccount, so that every call it makes is
// checked against the chart's ClusterRole: the chart is rendered with the real helm, its ServiceAccount,
// ClusterRole and ClusterRoleBinding are created for a release in the test's namespace, and a kubeconfig
// with a token of that ServiceAccount (TokenRequest API, as a pod's projected token) is written to a temp
// file. A call the role does not grant fails with 403 in the test, as it would in a cluster.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubernetesObjectApi, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { uniqueName } from './cluster.js';

export interface RenderedObject extends KubernetesObject {
  spec?: Record<string, unknown>;
  rules?: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
  data?: Record<string, string>;
}

/** `helm template` of deploy/helm/quartermaster (real helm from QM_HELM). */
export function renderChart(release: string, namespace: string, extraArgs: string[] = []): RenderedObject[] {
  const helm = process.env.QM_HELM;
  if (!helm) throw new Error('QM_HELM is not set: run through the k8s Jest project');
  const chart = new URL('../../../deploy/helm/quartermaster', import.meta.url).pathname;
  const result = spawnSync(helm, ['template', release, chart, '--namespace', namespace, '--kube-version', 'v1.34.4', ...extraArgs], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`helm template failed: ${result.stderr}`);
  const documents = parseAllDocuments(result.stdout);
  for (const document of documents) {
    if (document.errors.length > 0) throw new Error(`rendered YAML does not parse: ${document.errors[0]!.message}`);
  }
  return documents.map((document) => document.toJS() as RenderedObject).filter((object) => object !== null);
}

export interface ChartIdentity {
  /** Kubeconfig file that authenticates as the chart's ServiceAccount. */
  kubeconfigPath: string;
  serviceAccount: string;
  /** Deletes the ClusterRole, its binding and the temp files (the ServiceAccount goes with the namespace). */
  cleanUp(): Promise<void>;
}

/**
 * Creates the chart's ServiceAccount (in `namespace`), ClusterRole and ClusterRoleBinding for a fresh
 * release, and returns a kubeconfig that acts as that ServiceAccount against the same API server as `admin`.
 */
export async function chartServiceAccount(admin: KubeConfig, namespace: string, chartArgs: string[] = []): Promise<ChartIdentity> {
  const release = uniqueName('qm-rbac');
  const objects = renderChart(release, namespace, chartArgs).filter((o) => ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding'].includes(o.kind ?? ''));
  const generic = KubernetesObjectApi.makeApiClient(admin);
  for (const object of objects) {
    await generic.create(object.kind === 'ServiceAccount' ? { ...object, metadata: { ...object.metadata, namespace } } : object);
  }
  // The one the ClusterRole is bound to (the scheduler's and worker's; the API's has no role).
  const binding = objects.find((o) => o.kind === 'ClusterRoleBinding') as { subjects?: { name: string }[] } | undefined;
  const serviceAccount = binding!.subjects![0]!.name;
  const token = await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
    name: serviceAccount,
    namespace,
    body: { spec: { audiences: [], expirationSeconds: 24 * 3600 } },
  });
  const cluster = admin.getCurrentCluster();
  if (!cluster?.caData) throw new Error('the test kubeconfig has no certificate-authority-data');
  const dir = mkdtempSync(join(tmpdir(), 'qm-chart-sa-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfigPath,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      `  - name: test`,
      '    cluster:',
      `      server: ${cluster.server}`,
      `      certificate-authority-data: ${cluster.caData}`,
      'users:',
      `  - name: ${serviceAccount}`,
      '    user:',
      `      token: ${token.status!.token}`,
      'contexts:',
      '  - name: chart-service-account',
      '    context:',
      '      cluster: test',
      `      user: ${serviceAccount}`,
      `      namespace: ${namespace}`,
      'current-context: chart-service-account',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  return {
    kubeconfigPath,
    serviceAccount,
    async cleanUp() {
      for (const object of objects) {
        if (object.kind !== 'ServiceAccount') await generic.delete(object).catch(() => undefined);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
