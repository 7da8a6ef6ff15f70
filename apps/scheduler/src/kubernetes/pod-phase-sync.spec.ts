import { describe, expect, it } from '@jest/globals';
import type { V1Pod } from '@kubernetes/client-node';
import { kubernetesSettingsFromEnv } from './kubernetes-settings.js';
import { gangVerdict } from './pod-phase-sync.js';

const pod = (name: string, phase: string, node = 'n1', terminating = false): V1Pod => ({
  metadata: { name, namespace: 'ns', ...(terminating ? { deletionTimestamp: new Date() } : {}) },
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
    expect(gangVerdict([pod('a', 'Failed'), pod('b', 'Running')], 3)).toEqual({ kind: 'failed', pod: 'ns/a' });
  });
  it('ignores terminating pods and gangs of no replicas', () => {
    expect(gangVerdict([pod('a', 'Failed', 'n1', true), pod('b', 'Running')], 1)).toEqual({ kind: 'running' });
    expect(gangVerdict([], 0)).toEqual({ kind: 'none' });
  });
});

describe('kubernetesSettingsFromEnv', () => {
  it('has defaults and rejects bad values with the variable named', () => {
    expect(kubernetesSettingsFromEnv({})).toMatchObject({ namespace: 'default', schedulerName: 'quartermaster', replicaFailure: 'fail', gracePeriodSeconds: undefined });
    expect(kubernetesSettingsFromEnv({ QM_KUBE_GRACE_SECONDS: '0', QM_KUBE_REPLICA_FAILURE: 'requeue' })).toMatchObject({ gracePeriodSeconds: 0, replicaFailure: 'requeue' });
    expect(() => kubernetesSettingsFromEnv({ QM_KUBE_REPLICA_FAILURE: 'retry' })).toThrow(/QM_KUBE_REPLICA_FAILURE/);
    expect(() => kubernetesSettingsFromEnv({ QM_KUBE_NAMESPACE: 'Bad_NS' })).toThrow(/QM_KUBE_NAMESPACE/);
    expect(() => kubernetesSettingsFromEnv({ QM_KUBE_GRACE_SECONDS: '-1' })).toThrow(/QM_KUBE_GRACE_SECONDS/);
  });
});
