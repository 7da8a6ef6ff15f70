import { KubeConfig, RbacAuthorizationV1Api, type V1PolicyRule } from '@kubernetes/client-node';
import { uniqueName } from './cluster.js';

/**
 * A KubeConfig acting as a user who may do what `rules` grant and nothing else (the admin config impersonates
 * it): e.g. list and watch a kind but not GET one (403). Returns it with `setRules` (its grants changed, e.g. a
 * verb taken away mid-test; the API server's authorizer sees the change a moment later) and the clean-up of its
 * ClusterRole and binding.
 */
export async function restrictedIdentity(
  admin: KubeConfig,
  label: string,
  rules: V1PolicyRule[],
): Promise<{ kubeConfig: KubeConfig; setRules(rules: V1PolicyRule[]): Promise<void>; cleanUp(): Promise<void> }> {
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  const name = uniqueName(label);
  await rbac.createClusterRole({ body: { metadata: { name }, rules } });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name }],
    },
  });
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: admin.clusters,
    users: admin.users.map((user) => ({ ...user, impersonateUser: name })),
    contexts: admin.contexts,
    currentContext: admin.currentContext,
  });
  return {
    kubeConfig,
    async setRules(next) {
      await rbac.replaceClusterRole({ name, body: { metadata: { name }, rules: next } });
    },
    async cleanUp() {
      await rbac.deleteClusterRoleBinding({ name });
      await rbac.deleteClusterRole({ name });
    },
  };
}
