import { describe, expect, it } from '@jest/globals';
import type { V1Pod } from '@kubernetes/client-node';
import { standingFor } from './bind-checks.js';
import { EMPTY_POD_POLICY } from '#core';
import type { BindTarget } from './kube-job-store.js';

const target: BindTarget = {
  id: 'job-a',
  name: 'a',
  team: 'vision',
  priority: 0,
  state: 'BINDING',
  acceleratorsPerReplica: 8,
  template: { image: 'x', command: [], args: [], env: {} },
  checkpointGraceSeconds: null,
  importedFrom: null,
  workload: { apiVersion: 'batch/v1', kind: 'Job', namespace: 'ml', name: 'a', uid: 'uid-a' },
  flavor: null,
  allocations: [{ replica: 0, node: 'n1', accelerators: 8, cpuMillis: 0, memoryMiB: 0, role: null }],
  nodes: [],
  neighbours: new Set(['job-b/1/n1']),
  admission: '1',
  preemptedJobs: [],
  podPolicy: EMPTY_POD_POLICY,
  namespace: null,
  releasing: [],
};
const pod = (jobId: string, replica: { label?: string; annotation?: string }): V1Pod => ({
  metadata: {
    labels: { 'quartermaster.io/job-id': jobId, ...(replica.label ? { 'quartermaster.io/replica': replica.label } : {}) },
    annotations: replica.annotation ? { 'quartermaster.io/replica': replica.annotation } : {},
  },
});

describe('how a pod on a node counts against a bind there', () => {
  it('a workload pod Quartermaster bound holds its replica by the Binding’s annotation, as a labelled pod does', () => {
    const standing = standingFor(target, 'n1');
    // Another job's workload pod bound to its allocated replica here: it holds its share.
    expect(standing(pod('job-b', { annotation: '1' }))).toBe('holds');
    expect(standing(pod('job-b', { label: '1' }))).toBe('holds');
    expect(standing(pod('job-b', { annotation: '2' }))).toBe('leaving');
    // The job's own pod of the replica allocated here.
    expect(standing(pod('job-a', { annotation: '0' }))).toBe('self');
  });
});
