import type { V1Pod } from '@kubernetes/client-node';
import {
  integerField,
  list,
  podTemplate,
  record,
  type Derived,
  type KubeObject,
  type WorkloadKindSpec,
  type WorkloadRole,
} from './workload.js';

const MAX_INT32 = 2_147_483_647;

/**
 * The roles of a RayCluster spec (a RayCluster's `spec`, a RayJob's `spec.rayClusterSpec`): the head,
 * then every worker group with the replica count the KubeRay operator creates (replicas clamped to
 * [minReplicas, maxReplicas], times numOfHosts; a suspended group has none). Workers above minReplicas
 * are elastic: the gang may start with the head and every group at its minimum.
 */
export function rayClusterRoles(clusterSpec: unknown, at: string): Derived<WorkloadRole[]> {
  const spec = record(clusterSpec);
  const head = podTemplate(record(spec.headGroupSpec).template);
  if (!head)
    return { ok: false, field: `${at}.headGroupSpec.template`, message: 'has no pod spec with containers' };
  const roles: WorkloadRole[] = [{ name: 'head', count: 1, minCount: 1, template: head }];
  for (const [i, group] of list(spec.workerGroupSpecs).map(record).entries()) {
    const field = `${at}.workerGroupSpecs[${i}]`;
    const min = integerField(group.minReplicas, 0);
    const max = integerField(group.maxReplicas, MAX_INT32);
    const hosts = integerField(group.numOfHosts, 1);
    if (min === null || max === null || hosts === null)
      return {
        ok: false,
        field,
        message: 'minReplicas, maxReplicas and numOfHosts must be non-negative integers',
      };
    const asked = integerField(group.replicas, min);
    if (asked === null)
      return { ok: false, field: `${field}.replicas`, message: 'must be a non-negative integer' };
    const template = podTemplate(group.template);
    if (!template)
      return { ok: false, field: `${field}.template`, message: 'has no pod spec with containers' };
    const suspended = group.suspend === true;
    const replicas = suspended ? 0 : min > max ? max : Math.min(Math.max(asked, min), max);
    const least = suspended ? 0 : Math.min(min, max);
    const name = typeof group.groupName === 'string' ? group.groupName : `group-${i}`;
    roles.push({
      name,
      count: replicas * Math.max(hosts, 1),
      minCount: least * Math.max(hosts, 1),
      template,
    });
  }
  return { ok: true, value: roles };
}

/** KubeRay RayCluster (ray.io/v1): head plus worker groups. Runs until deleted; stopped by evicting its pods. */
export const rayClusterKind: WorkloadKindSpec = {
  kind: 'RayCluster',
  apiVersion: 'ray.io/v1',
  plural: 'rayclusters',
  roles: (object: KubeObject) => rayClusterRoles(object.spec, 'spec'),
  status: () => ({ phase: 'active' }),
  suspendPatch: () => null,
  roleOf: rayRoleOf,
};

/** A Ray pod's role: `head`, or its worker group's name (labels the KubeRay operator sets). */
export function rayRoleOf(pod: V1Pod): string | null {
  const labels = pod.metadata?.labels ?? {};
  if (labels['ray.io/node-type'] === 'head') return 'head';
  return labels['ray.io/group'] ?? null;
}

/**
 * KubeRay RayJob (ray.io/v1): the gang is the RayCluster it creates (`spec.rayClusterSpec`). Suspended
 * through `spec.suspend` (the operator deletes the cluster and the submitter) when KubeRay allows it:
 * KubeRay 1.5 fails a suspended RayJob for good (ValidationFailed) unless `shutdownAfterJobFinishes` is true
 * and it has its own cluster — so other RayJobs (the upstream sample among them) are stopped by deleting
 * their RayCluster, which the operator creates anew (stopChild). Finished when `status.jobDeploymentStatus` is
 * Complete (SUCCEEDED, else failed) or Failed/ValidationFailed — its job ends then only once the RayCluster is
 * gone (keptChild): a cluster kept after the job finished still holds the gang's accelerators.
 */
export const rayJobKind: WorkloadKindSpec = {
  kind: 'RayJob',
  apiVersion: 'ray.io/v1',
  plural: 'rayjobs',
  roles(object) {
    const spec = record(object.spec);
    if (spec.rayClusterSpec === undefined) {
      return {
        ok: false,
        field: 'spec.rayClusterSpec',
        message: 'is missing (a RayJob on an existing cluster, clusterSelector, has no gang of its own)',
      };
    }
    return rayClusterRoles(spec.rayClusterSpec, 'spec.rayClusterSpec');
  },
  status(object) {
    const status = record(object.status);
    const deployment = status.jobDeploymentStatus;
    const job = typeof status.jobStatus === 'string' ? status.jobStatus : '';
    const detail = [status.reason, status.message]
      .filter((s) => typeof s === 'string' && s !== '')
      .join(': ');
    if (deployment === 'Complete') {
      return job === 'SUCCEEDED'
        ? { phase: 'succeeded', message: 'RayJob complete: SUCCEEDED' }
        : {
            phase: 'failed',
            message: `RayJob complete: ${job || 'no job status'}${detail ? ` (${detail})` : ''}`,
          };
    }
    if (deployment === 'Failed' || deployment === 'ValidationFailed')
      return { phase: 'failed', message: `RayJob ${deployment}${detail ? `: ${detail}` : ''}` };
    return { phase: 'active' };
  },
  suspendPatch(suspend, object) {
    const spec = record(object.spec);
    const ownCluster = Object.keys(record(spec.clusterSelector)).length === 0;
    return spec.shutdownAfterJobFinishes === true && ownCluster ? { spec: { suspend } } : null;
  },
  // KubeRay 1.5 does not recreate the head pod of a RayJob's provisioned RayCluster (it leaves the failure to
  // the RayJob), so evicting the pods would end the RayJob; a deleted RayCluster is created anew by the
  // RayJob controller (same name), and its submitter resubmits the Ray job once the new cluster is ready.
  stopChild: ownRayCluster,
  roleOf: rayRoleOf,
  // Finished, the RayJob's cluster stays unless shutdownAfterJobFinishes (and then for ttlSecondsAfterFinished):
  // its pods hold their accelerators until it is deleted.
  keptChild: ownRayCluster,
};

/** The RayCluster a RayJob created for itself (status.rayClusterName), or null (none yet, or clusterSelector). */
function ownRayCluster(object: KubeObject): { apiVersion: string; kind: string; namespace: string; name: string } | null {
  const spec = record(object.spec);
  const name = record(object.status).rayClusterName;
  if (Object.keys(record(spec.clusterSelector)).length > 0 || typeof name !== 'string' || name === '') return null;
  return { apiVersion: 'ray.io/v1', kind: 'RayCluster', namespace: object.metadata?.namespace ?? 'default', name };
}
