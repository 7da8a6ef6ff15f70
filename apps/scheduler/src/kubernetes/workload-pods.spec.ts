import { describe, expect, it } from '@jest/globals';
import type { V1Pod } from '@kubernetes/client-node';
import { assignSlots, jobRoleOfPod } from './workload-pods.js';

const pod = (name: string, labels: Record<string, string> = {}): V1Pod => ({ metadata: { name, labels } });
const jobSetPod = (name: string, replicatedJob: string, replica?: number): V1Pod =>
  pod(name, {
    'jobset.sigs.k8s.io/replicatedjob-name': replicatedJob,
    ...(replica === undefined ? {} : { 'quartermaster.io/replica': String(replica) }),
  });
const names = (assigned: Map<number, V1Pod>): Record<number, string> =>
  Object.fromEntries([...assigned].map(([replica, p]) => [replica, p.metadata!.name!]));

describe('binding a multi-role workload gang: each pod takes a replica of its own role', () => {
  // The core placed replica 0 (the CPU-only driver) apart from replicas 1-2 (the GPU workers).
  const allocations = [
    { replica: 0, node: 'cpu-1', role: 'driver' },
    { replica: 1, node: 'gpu-1', role: 'workers' },
    { replica: 2, node: 'gpu-2', role: 'workers' },
  ];
  const roleOf = (p: V1Pod): string | null => jobRoleOfPod('JobSet', p);

  it('pods without a replica take free replicas of their role, whatever their names sort as', () => {
    // "a-worker" sorts before "z-driver": without roles it would take replica 0, the driver's CPU-only slot.
    const { assigned, missing } = assignSlots([jobSetPod('a-worker', 'workers'), jobSetPod('b-worker', 'workers'), jobSetPod('z-driver', 'driver')], allocations, roleOf);
    expect(names(assigned)).toEqual({ 0: 'z-driver', 1: 'a-worker', 2: 'b-worker' });
    expect(missing).toEqual([]);
  });

  it('a pod labelled with a replica of another role gives it up; a role short of pods leaves its replicas missing', () => {
    const { assigned, missing } = assignSlots([jobSetPod('w', 'workers', 0), jobSetPod('v', 'workers')], allocations, roleOf);
    expect(names(assigned)).toEqual({ 1: 'v', 2: 'w' });
    expect(missing).toEqual([0]);
  });

  it('a pod of no allocated role takes no replica', () => {
    const { assigned, missing } = assignSlots([jobSetPod('x', 'evaluator'), jobSetPod('d', 'driver')], allocations, roleOf);
    expect(names(assigned)).toEqual({ 0: 'd' });
    expect(missing).toEqual([1, 2]);
  });

  it('replicas without a role (a job of one role) take any pod, heads first', () => {
    const { assigned } = assignSlots([pod('b'), pod('a-head', { 'ray.io/node-type': 'head' })], [{ replica: 0 }, { replica: 1 }]);
    expect(names(assigned)).toEqual({ 0: 'a-head', 1: 'b' });
  });
});

describe('the role of a workload pod, from its controller’s labels', () => {
  it('per kind: a replicatedJob, the Ray head or worker group, the LWS leader or a worker; as a DNS label', () => {
    expect(jobRoleOfPod('JobSet', jobSetPod('p', 'Driver_1'))).toBe('driver-1');
    expect(jobRoleOfPod('TrainJob', jobSetPod('p', 'node'))).toBe('node');
    expect(jobRoleOfPod('RayJob', pod('h', { 'ray.io/node-type': 'head', 'ray.io/group': 'headgroup' }))).toBe('head');
    expect(jobRoleOfPod('RayCluster', pod('w', { 'ray.io/node-type': 'worker', 'ray.io/group': 'learners' }))).toBe('learners');
    expect(jobRoleOfPod('LeaderWorkerSet', pod('l', { 'leaderworkerset.sigs.k8s.io/worker-index': '0' }))).toBe('leader');
    expect(jobRoleOfPod('LeaderWorkerSet', pod('w', { 'leaderworkerset.sigs.k8s.io/worker-index': '3' }))).toBe('worker');
    expect(jobRoleOfPod('Job', pod('p'))).toBe('pod');
    expect(jobRoleOfPod('JobSet', pod('p'))).toBeNull();
  });
});
