import { describe, expect, it } from '@jest/globals';
import { leaderWorkerSetKind } from './workload-lws.js';

const pod = (image: string) => ({ spec: { containers: [{ name: 'nginx', image }] } });

describe('LeaderWorkerSet as a workload', () => {
  it('each group (a leader and size − 1 workers) is one gang; the leader template defaults to the worker’s', () => {
    const roles = leaderWorkerSetKind.roles(
      {
        kind: 'LeaderWorkerSet',
        spec: { replicas: 3, leaderWorkerTemplate: { size: 4, workerTemplate: pod('nginx:1.14.2') } },
      },
      [],
    );
    expect(
      roles.ok && roles.value.map((r) => [r.name, r.count, r.template.spec!.containers[0]!.image]),
    ).toEqual([
      ['leader', 1, 'nginx:1.14.2'],
      ['worker', 3, 'nginx:1.14.2'],
    ]);
    const split = leaderWorkerSetKind.roles(
      {
        kind: 'LeaderWorkerSet',
        spec: { leaderWorkerTemplate: { size: 2, leaderTemplate: pod('lead'), workerTemplate: pod('work') } },
      },
      [],
    );
    expect(split.ok && split.value.map((r) => r.template.spec!.containers[0]!.image)).toEqual([
      'lead',
      'work',
    ]);
    expect(
      leaderWorkerSetKind.roles(
        { kind: 'LeaderWorkerSet', spec: { leaderWorkerTemplate: { size: 0, workerTemplate: pod('w') } } },
        [],
      ),
    ).toMatchObject({ ok: false });
  });

  it('tells a pod’s group from its group-index label; never finishes; is stopped by eviction', () => {
    expect(
      leaderWorkerSetKind.groupOf!({
        metadata: { labels: { 'leaderworkerset.sigs.k8s.io/group-index': '2' } },
      }),
    ).toBe('2');
    expect(leaderWorkerSetKind.groupOf!({ metadata: { labels: {} } })).toBeNull();
    expect(leaderWorkerSetKind.status({})).toEqual({ phase: 'active' });
    expect(leaderWorkerSetKind.suspendPatch(true, {})).toBeNull();
  });
});
