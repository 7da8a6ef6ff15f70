import { describe, expect, it } from '@jest/globals';
import { rayClusterKind, rayJobKind } from './workload-ray.js';
import type { KubeObject } from './workload.js';

const pod = (image: string) => ({ spec: { containers: [{ name: 'ray', image }] } });
const clusterSpec = (groups: Record<string, unknown>[]) => ({
  headGroupSpec: { rayStartParams: {}, template: pod('rayproject/ray:2.46.0') },
  workerGroupSpecs: groups,
});

describe('KubeRay RayCluster and RayJob as workloads', () => {
  it.each([
    [
      'the sample: 1 worker (min 1, max 5)',
      [{ groupName: 'workergroup', replicas: 1, minReplicas: 1, maxReplicas: 5, template: pod('w') }],
      [1, 1],
      [1, 1],
    ],
    [
      'workers above minReplicas are elastic',
      [{ groupName: 'gpu', replicas: 4, minReplicas: 2, maxReplicas: 4, template: pod('w') }],
      [1, 4],
      [1, 2],
    ],
    [
      'replicas are clamped to maxReplicas',
      [{ groupName: 'gpu', replicas: 9, minReplicas: 0, maxReplicas: 3, template: pod('w') }],
      [1, 3],
      [1, 0],
    ],
    [
      'a multi-host group counts numOfHosts pods per replica',
      [{ groupName: 'tpu', replicas: 2, minReplicas: 2, maxReplicas: 2, numOfHosts: 4, template: pod('w') }],
      [1, 8],
      [1, 8],
    ],
    [
      'a suspended group has no pods',
      [{ groupName: 'gpu', replicas: 2, minReplicas: 2, maxReplicas: 2, suspend: true, template: pod('w') }],
      [1, 0],
      [1, 0],
    ],
  ])('%s', (_name, groups, wantCounts, wantMins) => {
    const roles = rayClusterKind.roles({ kind: 'RayCluster', spec: clusterSpec(groups) }, []);
    expect(roles.ok && roles.value.map((r) => r.count)).toEqual(wantCounts);
    expect(roles.ok && roles.value.map((r) => r.minCount)).toEqual(wantMins);
    expect(roles.ok && roles.value[0]!.name).toBe('head');
  });

  it('a RayJob’s gang is its rayClusterSpec; one on an existing cluster has none', () => {
    const rayJob: KubeObject = {
      kind: 'RayJob',
      spec: {
        entrypoint: 'python x.py',
        rayClusterSpec: clusterSpec([
          { groupName: 'small-group', replicas: 1, minReplicas: 1, maxReplicas: 5, template: pod('w') },
        ]),
      },
    };
    const roles = rayJobKind.roles(rayJob, []);
    expect(roles.ok && roles.value.map((r) => [r.name, r.count])).toEqual([
      ['head', 1],
      ['small-group', 1],
    ]);
    expect(
      rayJobKind.roles({ kind: 'RayJob', spec: { clusterSelector: { 'ray.io/cluster': 'x' } } }, []),
    ).toMatchObject({ ok: false, field: 'spec.rayClusterSpec' });
  });

  it('a RayJob finishes on jobDeploymentStatus Complete (by its jobStatus) or Failed; a RayCluster never does', () => {
    expect(rayJobKind.status({ status: { jobDeploymentStatus: 'Running', jobStatus: 'RUNNING' } })).toEqual({
      phase: 'active',
    });
    expect(
      rayJobKind.status({ status: { jobDeploymentStatus: 'Complete', jobStatus: 'SUCCEEDED' } }),
    ).toMatchObject({ phase: 'succeeded' });
    expect(
      rayJobKind.status({ status: { jobDeploymentStatus: 'Complete', jobStatus: 'STOPPED' } }),
    ).toMatchObject({ phase: 'failed' });
    expect(
      rayJobKind.status({
        status: {
          jobDeploymentStatus: 'Failed',
          reason: 'DeadlineExceeded',
          message: 'past activeDeadlineSeconds',
        },
      }),
    ).toEqual({
      phase: 'failed',
      message: 'RayJob Failed: DeadlineExceeded: past activeDeadlineSeconds',
    });
    expect(rayClusterKind.status({ status: { state: 'ready' } })).toEqual({ phase: 'active' });
    expect(rayClusterKind.suspendPatch(true, { spec: {} })).toBeNull();
  });

  it('a RayJob is suspended only when KubeRay allows it (shutdownAfterJobFinishes, its own cluster); else its pods are evicted', () => {
    const rayJob = (spec: Record<string, unknown>) => ({ spec: { rayClusterSpec: {}, ...spec } });
    expect(rayJobKind.suspendPatch(true, rayJob({ shutdownAfterJobFinishes: true }))).toEqual({ spec: { suspend: true } });
    expect(rayJobKind.suspendPatch(false, rayJob({ shutdownAfterJobFinishes: true }))).toEqual({ spec: { suspend: false } });
    // KubeRay 1.5 marks a suspended RayJob without shutdownAfterJobFinishes ValidationFailed, for good: the
    // upstream sample is such a RayJob.
    expect(rayJobKind.suspendPatch(true, rayJob({}))).toBeNull();
    expect(rayJobKind.suspendPatch(true, rayJob({ shutdownAfterJobFinishes: false }))).toBeNull();
    expect(rayJobKind.suspendPatch(true, { spec: { shutdownAfterJobFinishes: true, clusterSelector: { 'ray.io/cluster': 'c' } } })).toBeNull();
  });

  it('a RayJob that cannot be suspended is stopped by deleting its RayCluster (KubeRay 1.5 never recreates the head pod of a RayJob’s provisioned cluster, but creates a new cluster)', () => {
    const rayJob = { metadata: { namespace: 'ns', name: 'rj' }, spec: { rayClusterSpec: {} }, status: { rayClusterName: 'rj-x7k2p' } };
    expect(rayJobKind.stopChild!(rayJob)).toEqual({ apiVersion: 'ray.io/v1', kind: 'RayCluster', namespace: 'ns', name: 'rj-x7k2p' });
    expect(rayJobKind.stopChild!({ ...rayJob, status: {} })).toBeNull();
    // Not its own cluster: never deleted.
    expect(rayJobKind.stopChild!({ ...rayJob, spec: { clusterSelector: { 'ray.io/cluster': 'shared' } } })).toBeNull();
    expect(rayClusterKind.stopChild).toBeUndefined();
  });

  it('a finished RayJob’s own RayCluster outlives it (keptChild: its pods still hold the gang); a shared cluster is not its own', () => {
    const rayJob = { metadata: { namespace: 'ns', name: 'rj' }, spec: { rayClusterSpec: {} }, status: { rayClusterName: 'rj-x7k2p', jobDeploymentStatus: 'Complete', jobStatus: 'SUCCEEDED' } };
    expect(rayJobKind.keptChild!(rayJob)).toEqual({ apiVersion: 'ray.io/v1', kind: 'RayCluster', namespace: 'ns', name: 'rj-x7k2p' });
    expect(rayJobKind.keptChild!({ ...rayJob, spec: { clusterSelector: { 'ray.io/cluster': 'shared' } } })).toBeNull();
    expect(rayClusterKind.keptChild).toBeUndefined();
  });
});
