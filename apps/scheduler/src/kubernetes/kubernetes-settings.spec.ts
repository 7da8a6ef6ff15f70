import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubernetesSettingsError, kubernetesSettingsFromEnv } from './kubernetes-settings.js';

describe('kubernetesSettingsFromEnv', () => {
  it('has defaults for every setting', () => {
    expect(kubernetesSettingsFromEnv({}, '/nonexistent')).toEqual({
      namespace: 'default',
      schedulerName: 'quartermaster',
      gracePeriodSeconds: undefined,
      replicaFailure: 'fail',
      nodeSyncDebounceMs: 100,
      flavorRefreshMs: 5000,
      importEveryMs: 1000,
      leaderLease: null,
      extenderSchedulerNames: ['default-scheduler'],
      leaderLeaseNamespace: 'default',
      ownNamespace: null,
      createNamespaces: false,
      namespacePodSecurity: 'restricted',
      unlabelledAcceleratorPods: 'allow',
    });
  });

  it("takes its own namespace from QM_KUBE_OWN_NAMESPACE, else from the in-cluster ServiceAccount's", () => {
    const dir = mkdtempSync(join(tmpdir(), 'qm-sa-'));
    const file = join(dir, 'namespace');
    writeFileSync(file, 'quartermaster\n');
    try {
      expect(kubernetesSettingsFromEnv({}, file).ownNamespace).toBe('quartermaster');
      expect(kubernetesSettingsFromEnv({ QM_KUBE_OWN_NAMESPACE: 'qm-system' }, file).ownNamespace).toBe('qm-system');
      expect(kubernetesSettingsFromEnv({}, join(dir, 'missing')).ownNamespace).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads whether team namespaces are created, and at which Pod Security level', () => {
    expect(kubernetesSettingsFromEnv({ QM_KUBE_CREATE_NAMESPACES: 'true', QM_KUBE_NAMESPACE_POD_SECURITY: 'baseline' })).toMatchObject({ createNamespaces: true, namespacePodSecurity: 'baseline' });
    expect(kubernetesSettingsFromEnv({ QM_EXTENDER_UNLABELLED_ACCELERATOR_PODS: 'charge' }).unlabelledAcceleratorPods).toBe('charge');
  });

  it('reads every setting', () => {
    expect(kubernetesSettingsFromEnv({ QM_KUBE_GRACE_SECONDS: '0', QM_KUBE_REPLICA_FAILURE: 'requeue' })).toMatchObject({ gracePeriodSeconds: 0, replicaFailure: 'requeue' });
  });

  it('reads the leader Lease name and namespace (by default the pods\' namespace)', () => {
    expect(kubernetesSettingsFromEnv({ QM_KUBE_LEADER_LEASE: ' qm-scheduler ' }).leaderLease).toBe('qm-scheduler');
    expect(kubernetesSettingsFromEnv({ QM_KUBE_NAMESPACE: 'jobs' }).leaderLeaseNamespace).toBe('jobs');
    expect(kubernetesSettingsFromEnv({ QM_KUBE_NAMESPACE: 'jobs', QM_KUBE_LEADER_LEASE_NAMESPACE: 'quartermaster' }).leaderLeaseNamespace).toBe('quartermaster');
  });

  it('reads the kube-scheduler profiles that delegate to the extender', () => {
    expect(kubernetesSettingsFromEnv({ QM_EXTENDER_SCHEDULER_NAMES: 'default-scheduler, gpu-scheduler,gpu-scheduler' }).extenderSchedulerNames).toEqual([
      'default-scheduler',
      'gpu-scheduler',
    ]);
  });

  it.each([
    [{ QM_EXTENDER_SCHEDULER_NAMES: 'default-scheduler,,x' }, /QM_EXTENDER_SCHEDULER_NAMES=default-scheduler,,x: '' is not a scheduler name/],
    [{ QM_KUBE_LEADER_LEASE: 'Not_A_Name' }, /QM_KUBE_LEADER_LEASE=Not_A_Name must be a Lease name/],
    [{ QM_KUBE_NAMESPACE: 'a.b' }, /QM_KUBE_NAMESPACE=a.b must be a DNS label/],
    [{ QM_KUBE_LEADER_LEASE_NAMESPACE: 'Release' }, /QM_KUBE_LEADER_LEASE_NAMESPACE=Release must be a DNS label/],
    [{ QM_KUBE_REPLICA_FAILURE: 'retry' }, /must be fail or requeue/],
    [{ QM_KUBE_IMPORT_EVERY_MS: '-1' }, /QM_KUBE_IMPORT_EVERY_MS=-1 must be an integer ≥ 0/],
    [{ QM_KUBE_GRACE_SECONDS: '-1' }, /QM_KUBE_GRACE_SECONDS=-1 must be an integer ≥ 0/],
    [{ QM_KUBE_CREATE_NAMESPACES: 'yes' }, /QM_KUBE_CREATE_NAMESPACES=yes must be true or false/],
    [{ QM_KUBE_NAMESPACE_POD_SECURITY: 'strict' }, /QM_KUBE_NAMESPACE_POD_SECURITY=strict must be one of privileged, baseline, restricted/],
    [{ QM_EXTENDER_UNLABELLED_ACCELERATOR_PODS: 'import' }, /QM_EXTENDER_UNLABELLED_ACCELERATOR_PODS=import must be allow or charge/],
    [{ QM_KUBE_OWN_NAMESPACE: 'Quartermaster' }, /QM_KUBE_OWN_NAMESPACE=Quartermaster must be a DNS label/],
  ])('rejects %j with the setting and the rule', (env, message) => {
    expect(() => kubernetesSettingsFromEnv(env, '/nonexistent')).toThrow(KubernetesSettingsError);
    expect(() => kubernetesSettingsFromEnv(env, '/nonexistent')).toThrow(message);
  });
});
