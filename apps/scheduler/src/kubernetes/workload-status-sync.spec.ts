import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '#kube';
import { mayEndJob, workloadVerdict } from './workload-status-sync.js';

describe('what a workload job becomes when its workload finishes', () => {
  const succeeded = { phase: 'succeeded', message: 'RayJob complete: SUCCEEDED' } as const;

  it('follows the controller while the job holds its allocation', () => {
    expect(workloadVerdict('RUNNING', succeeded)).toEqual({ to: 'SUCCEEDED', reason: 'RayJob complete: SUCCEEDED' });
    expect(workloadVerdict('RUNNING', { phase: 'failed', message: 'boom' })).toEqual({ to: 'FAILED', reason: 'boom' });
    expect(workloadVerdict('RUNNING', { phase: 'active' })).toBeNull();
    expect(workloadVerdict('PENDING', 'gone')).toEqual({ to: 'CANCELLED', reason: 'its workload was deleted' });
  });

  it('a job that never held an allocation: its workload finished before admission', () => {
    expect(workloadVerdict('PENDING', succeeded, null)).toEqual({
      to: 'CANCELLED',
      reason: 'its workload finished before admission (RayJob complete: SUCCEEDED)',
    });
  });

  it('a kept RayCluster preempted after its RayJob succeeded: it ran, lost its allocation, and says so', () => {
    const verdict = workloadVerdict('PENDING', succeeded, { reason: 'preempted by nlp/nlp-c (priority 100)' });
    expect(verdict?.to).toBe('CANCELLED');
    expect(verdict?.reason).not.toContain('before admission');
    expect(verdict?.reason).toBe(
      'its workload finished (RayJob complete: SUCCEEDED) after the job had been admitted and then lost its allocation (preempted by nlp/nlp-c (priority 100)); nothing is left to run, so it is not admitted again',
    );
  });
});

describe('which watch events may end a job (and start a pass at once)', () => {
  const active = new Set(['js-1', 'rayjob-1']);
  const jobSet = (uid: string, conditions: unknown[] = [], extra: Partial<NonNullable<KubeObject['metadata']>> = {}): KubeObject => ({
    apiVersion: 'jobset.x-k8s.io/v1alpha2',
    kind: 'JobSet',
    metadata: { name: uid, namespace: 'ml', uid, ...extra },
    status: { conditions },
  });
  const completed = [{ type: 'Completed', status: 'True', reason: 'AllJobsCompleted' }];
  const cases: { name: string; kind: 'JobSet' | 'RayCluster'; object: KubeObject; deleted: boolean; want: boolean }[] = [
    { name: "an active job's JobSet completes", kind: 'JobSet', object: jobSet('js-1', completed), deleted: false, want: true },
    { name: "an active job's JobSet fails", kind: 'JobSet', object: jobSet('js-1', [{ type: 'Failed', status: 'True' }]), deleted: false, want: true },
    { name: "an active job's JobSet is deleted", kind: 'JobSet', object: jobSet('js-1'), deleted: true, want: true },
    { name: "an active job's JobSet is being deleted", kind: 'JobSet', object: jobSet('js-1', [], { deletionTimestamp: new Date() }), deleted: false, want: true },
    { name: "an active job's JobSet still runs (a status update)", kind: 'JobSet', object: jobSet('js-1', [{ type: 'Completed', status: 'False' }]), deleted: false, want: false },
    { name: 'a JobSet no active job stands for completes', kind: 'JobSet', object: jobSet('other', completed), deleted: false, want: false },
    {
      name: "a RayJob's kept RayCluster is deleted",
      kind: 'RayCluster',
      object: { apiVersion: 'ray.io/v1', kind: 'RayCluster', metadata: { name: 'rc', namespace: 'ml', uid: 'rc-1', ownerReferences: [{ apiVersion: 'ray.io/v1', kind: 'RayJob', name: 'rj', uid: 'rayjob-1' }] } },
      deleted: true,
      want: true,
    },
    {
      name: "a RayJob's RayCluster changes",
      kind: 'RayCluster',
      object: { apiVersion: 'ray.io/v1', kind: 'RayCluster', metadata: { name: 'rc', namespace: 'ml', uid: 'rc-1', ownerReferences: [{ apiVersion: 'ray.io/v1', kind: 'RayJob', name: 'rj', uid: 'rayjob-1' }] } },
      deleted: false,
      want: false,
    },
  ];
  it.each(cases)('$name → $want', ({ kind, object, deleted, want }) => {
    expect(mayEndJob(kind, object, deleted, active)).toBe(want);
  });
});
