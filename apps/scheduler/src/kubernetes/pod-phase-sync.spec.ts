import { describe, expect, it } from '@jest/globals';
import type { V1Pod } from '@kubernetes/client-node';
import { gangMembers, gangVerdict } from './pod-phase-sync.js';

const pod = (name: string, phase: string, node = 'n1', terminating = false, replica?: number): V1Pod => ({
  metadata: { name, namespace: 'ns', ...(replica === undefined ? {} : { labels: { 'quartermaster.io/replica': String(replica) } }), ...(terminating ? { deletionTimestamp: new Date() } : {}) },
  spec: { containers: [], ...(node ? { nodeName: node } : {}) },
  status: { phase },
});

describe('gangVerdict', () => {
  it('running only when every replica is bound and Running', () => {
    expect(gangVerdict([pod('a', 'Running'), pod('b', 'Running')], 2)).toEqual({ kind: 'running' });
    expect(gangVerdict([pod('a', 'Running')], 2)).toEqual({ kind: 'none' });
    expect(gangVerdict([pod('a', 'Running'), pod('b', 'Pending')], 2)).toEqual({ kind: 'none' });
    expect(gangVerdict([pod('a', 'Running'), pod('b', 'Running', '')], 2)).toEqual({ kind: 'none' });
  });
  it('succeeded when every replica succeeded; a Failed replica fails the gang at once', () => {
    expect(gangVerdict([pod('a', 'Succeeded'), pod('b', 'Succeeded')], 2)).toEqual({ kind: 'succeeded' });
    expect(gangVerdict([pod('a', 'Succeeded'), pod('b', 'Running')], 2)).toEqual({ kind: 'running' });
    expect(gangVerdict([pod('a', 'Failed'), pod('b', 'Running')], 3)).toEqual({ kind: 'failed', pod: 'ns/a', byNode: null });
  });
  it('ignores terminating pods and gangs of no replicas', () => {
    expect(gangVerdict([pod('a', 'Failed', 'n1', true), pod('b', 'Running')], 1)).toEqual({ kind: 'running' });
    expect(gangVerdict([], 0)).toEqual({ kind: 'none' });
  });
  it('a running gang with a replica deleted or being evicted is lost (not before it ran)', () => {
    const r0 = pod('a', 'Running', 'n1', false, 0);
    const r1 = pod('b', 'Running', 'n2', false, 1);
    expect(gangVerdict([r0, r1], 2, true)).toEqual({ kind: 'running' });
    expect(gangVerdict([r0], 2, true)).toEqual({ kind: 'lost', replica: 1 });
    expect(gangVerdict([r0, pod('b', 'Running', 'n2', true, 1)], 2, true)).toEqual({ kind: 'lost', replica: 1 });
    expect(gangVerdict([], 2, true)).toEqual({ kind: 'lost', replica: 0 });
    expect(gangVerdict([r0, pod('b', 'Failed', 'n2', false, 1)], 2, true)).toEqual({ kind: 'failed', pod: 'ns/b', byNode: null });
    // A replica that Succeeded stays done when its pod is deleted or terminating.
    expect(gangVerdict([r0, pod('b', 'Succeeded', 'n2', true, 1)], 2, true)).toEqual({ kind: 'running' });
    expect(gangVerdict([pod('a', 'Succeeded', 'n1', true, 0), pod('b', 'Succeeded', 'n2', false, 1)], 2, true)).toEqual({ kind: 'succeeded' });
    // Still binding: a missing pod is one not created yet.
    expect(gangVerdict([r0], 2, false)).toEqual({ kind: 'none' });
  });
});

describe('failures by the node', () => {
  it('a pod the kubelet refused or dropped is failed by its node, not by itself', () => {
    const refused: V1Pod = { ...pod('a', 'Failed'), status: { phase: 'Failed', reason: 'OutOfnvidia.com/gpu', message: 'Node didn\'t have enough resource: nvidia.com/gpu, requested: 8, used: 8, capacity: 8' } };
    expect(gangVerdict([refused, pod('b', 'Running')], 2)).toEqual({
      kind: 'failed',
      pod: 'ns/a',
      byNode: "OutOfnvidia.com/gpu: Node didn't have enough resource: nvidia.com/gpu, requested: 8, used: 8, capacity: 8",
    });
    const evicted: V1Pod = { ...pod('a', 'Failed'), status: { phase: 'Failed', reason: 'Evicted' } };
    expect(gangVerdict([evicted], 1)).toMatchObject({ kind: 'failed', byNode: 'Evicted' });
    const crashed: V1Pod = { ...pod('a', 'Failed'), status: { phase: 'Failed', reason: 'Error' } };
    expect(gangVerdict([crashed], 1)).toMatchObject({ kind: 'failed', byNode: null });
  });
});

describe('gangMembers', () => {
  const workloadPod = (name: string, phase: string, node: string, replica?: number): V1Pod => {
    const p = pod(name, phase, node, false, replica);
    p.metadata!.labels = { ...p.metadata!.labels, 'quartermaster.io/job-id': 'j', 'quartermaster.io/workload-kind': 'RayCluster' };
    return p;
  };
  it('an elastic workload admitted below its size: the pods holding a replica make the gang, the others wait outside it', () => {
    // Head and one worker admitted (replicas 0 and 1), two more workers unbound and Pending.
    const pods = [workloadPod('head', 'Running', 'n1', 0), workloadPod('w1', 'Running', 'n2', 1), workloadPod('w2', 'Pending', ''), workloadPod('w3', 'Pending', '')];
    expect(gangMembers(pods).map((p) => p.metadata!.name)).toEqual(['head', 'w1']);
    expect(gangVerdict(gangMembers(pods), 2, true)).toEqual({ kind: 'running' });
  });
  it('Quartermaster’s own and annotated gangs: every pod counts', () => {
    const pods = [pod('a', 'Running', 'n1', false, 0), pod('b', 'Pending', '')];
    expect(gangMembers(pods)).toEqual(pods);
  });
});
