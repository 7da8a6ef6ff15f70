import { describe, expect, it } from '@jest/globals';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { nodeRoom, nodeVerdict, type PodStanding } from './node-capacity.js';

const node = (overrides: Partial<V1Node['spec']> = {}): V1Node => ({
  metadata: { name: 'n1' },
  spec: { ...overrides },
  status: { allocatable: { 'nvidia.com/gpu': '8', cpu: '96', memory: '1Ti' }, conditions: [{ type: 'Ready', status: 'True' }] },
});
const pod = (name: string, gpus: number, standing: PodStanding, phase = 'Running'): V1Pod & { standing: PodStanding } => ({
  metadata: { name, namespace: 'ns' },
  spec: { nodeName: 'n1', containers: [{ name: 'c', resources: { limits: { 'nvidia.com/gpu': String(gpus) } } }] },
  status: { phase },
  standing,
});
const need = (accelerators: number) => ({ accelerators, cpuMillis: 1000, memoryMiB: 1024 });

function verdict(pods: (V1Pod & { standing: PodStanding })[], gpus: number, n = node()) {
  const room = nodeRoom(n, pods, 'nvidia.com/gpu', (p) => (p as { standing: PodStanding }).standing);
  return nodeVerdict(room, need(gpus), 'nvidia.com/gpu');
}

describe('bind-time node check', () => {
  it('fits beside what holds, counting the gang\'s own pods once', () => {
    expect(verdict([pod('foreign', 2, 'holds'), pod('mine', 6, 'self')], 6)).toEqual({ kind: 'fits' });
  });
  it('a conflict when pods that hold their share leave no room (another scheduler took it)', () => {
    const v = verdict([pod('foreign', 8, 'holds')], 8);
    expect(v.kind).toBe('conflict');
    expect(v.kind === 'conflict' && v.message).toContain('makes 16 of 8 nvidia.com/gpu');
  });
  it('a wait while terminating or released pods are in the way; fits once they are gone; finished pods hold nothing', () => {
    const v = verdict([pod('old', 8, 'leaving')], 8);
    expect(v).toMatchObject({ kind: 'wait' });
    expect(v.kind === 'wait' && v.message).toContain('ns/old');
    expect(verdict([pod('old', 8, 'leaving', 'Succeeded')], 8)).toEqual({ kind: 'fits' });
  });
  it('a cordoned node takes nothing', () => {
    expect(verdict([], 1, node({ unschedulable: true }))).toMatchObject({ kind: 'conflict', message: 'node n1 is cordoned' });
  });
});
