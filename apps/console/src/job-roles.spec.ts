import { describe, expect, it } from '@jest/globals';
import { admittedAccelerators, roleRows, type RoleRow } from './job-roles';
import type { JobDetail } from './types';

type Input = Pick<JobDetail, 'roles' | 'allocation' | 'admittedReplicas' | 'state'>;

const role = (name: string, replicas: number, minReplicas: number, acceleratorsPerReplica: number) => ({
  name,
  replicas,
  minReplicas,
  acceleratorsPerReplica,
  cpuMillisPerReplica: 4000,
  memoryMiBPerReplica: 16384,
});
const alloc = (replica: number, role: string | null, node: string, accelerators: number) => ({
  replica,
  role,
  node,
  accelerators,
  cpuMillis: 4000,
  memoryMiB: 16384,
});
const gang = [role('driver', 1, 1, 0), role('worker', 4, 2, 8)];

describe('roleRows (the job page: a multi-role gang, role by role)', () => {
  const cases: { name: string; job: Input; want: Pick<RoleRow, 'name' | 'admitted' | 'nodes'>[] | null }[] = [
    {
      name: 'a job of one role has no rows',
      job: { roles: null, allocation: [alloc(0, null, 'gpu-1', 8)], admittedReplicas: 1, state: 'RUNNING' },
      want: null,
    },
    {
      name: 'a pending gang: asked figures only, nothing admitted, no nodes',
      job: { roles: gang, allocation: [], admittedReplicas: null, state: 'PENDING' },
      want: [
        { name: 'driver', admitted: null, nodes: [] },
        { name: 'worker', admitted: null, nodes: [] },
      ],
    },
    {
      name: 'an admitted gang counts each role’s replicas and lists its nodes in replica order, once each',
      job: {
        roles: gang,
        allocation: [
          alloc(4, 'worker', 'gpu-2', 8),
          alloc(0, 'driver', 'gpu-2', 0),
          alloc(1, 'worker', 'gpu-1', 8),
          alloc(2, 'worker', 'gpu-2', 8),
          alloc(3, 'worker', 'gpu-1', 8),
        ],
        admittedReplicas: 5,
        state: 'RUNNING',
      },
      want: [
        { name: 'driver', admitted: 1, nodes: ['gpu-2'] },
        { name: 'worker', admitted: 4, nodes: ['gpu-1', 'gpu-2'] },
      ],
    },
    {
      name: 'a finished gang admitted at its minimum (allocation released): every role at its minimum',
      job: { roles: gang, allocation: [], admittedReplicas: 3, state: 'SUCCEEDED' },
      want: [
        { name: 'driver', admitted: 1, nodes: [] },
        { name: 'worker', admitted: 2, nodes: [] },
      ],
    },
    {
      name: 'a finished gang admitted in full (allocation released): every role at its count',
      job: { roles: gang, allocation: [], admittedReplicas: 5, state: 'CANCELLED' },
      want: [
        { name: 'driver', admitted: 1, nodes: [] },
        { name: 'worker', admitted: 4, nodes: [] },
      ],
    },
    {
      name: 'a requeued gang (pending again) shows no admitted figures from its last admission',
      job: { roles: gang, allocation: [], admittedReplicas: 5, state: 'PENDING' },
      want: [
        { name: 'driver', admitted: null, nodes: [] },
        { name: 'worker', admitted: null, nodes: [] },
      ],
    },
  ];
  it.each(cases)('$name', ({ job, want }) => {
    const rows = roleRows(job);
    expect(rows?.map((r) => ({ name: r.name, admitted: r.admitted, nodes: r.nodes })) ?? null).toEqual(want);
  });

  it('carries each role’s asked figures through', () => {
    expect(
      roleRows({ roles: gang, allocation: [], admittedReplicas: null, state: 'PENDING' })?.[1],
    ).toMatchObject({
      replicas: 4,
      minReplicas: 2,
      acceleratorsPerReplica: 8,
      cpuMillisPerReplica: 4000,
      memoryMiBPerReplica: 16384,
    });
  });
});

describe('admittedAccelerators (the queue’s running column)', () => {
  const roles = [role('driver', 1, 1, 0), role('worker', 4, 2, 8)];
  it.each([
    ['one role: admitted replicas × accelerators', { roles: null, admittedReplicas: 3, replicas: 4, acceleratorsPerReplica: 8 }, 24],
    ['roles at their full count: each role its own', { roles, admittedReplicas: 5, replicas: 5, acceleratorsPerReplica: 8 }, 32],
    ['roles at their minimum', { roles, admittedReplicas: 3, replicas: 5, acceleratorsPerReplica: 8 }, 16],
  ])('%s', (_what, job, expected) => {
    expect(admittedAccelerators(job)).toBe(expected);
  });
});
