import { describe, expect, it } from '@jest/globals';
import { EMPTY_POD_POLICY, podPolicyRefusals, type PodPolicy } from './pod-policy.js';

const policy = (p: Partial<PodPolicy>): PodPolicy => ({ ...EMPTY_POD_POLICY, ...p });

const everything = {
  serviceAccountName: 'trainer',
  imagePullSecrets: ['registry-creds'],
  volumes: [
    { persistentVolumeClaim: { claimName: 'datasets' } },
    { configMap: { name: 'train-config' } },
    { secret: { secretName: 'wandb-key' } },
    {},
    { nfs: { server: 'FS-1.example.com' } },
  ],
  tolerations: [{ key: 'example.com/reserved', operator: 'Equal' }],
};

describe('podPolicyRefusals', () => {
  it('an empty policy refuses every reference, naming each field', () => {
    expect(podPolicyRefusals(everything, EMPTY_POD_POLICY).map((r) => r.field)).toEqual([
      'template.serviceAccountName',
      'template.imagePullSecrets[0]',
      'template.volumes[0].persistentVolumeClaim.claimName',
      'template.volumes[1].configMap.name',
      'template.volumes[2].secret.secretName',
      'template.volumes[4].nfs.server',
      'template.tolerations[0].key',
    ]);
  });

  it('a template that references nothing is always allowed', () => {
    expect(podPolicyRefusals({ volumes: [{}] }, EMPTY_POD_POLICY)).toEqual([]);
  });

  it('listed names are allowed, others are not; NFS hosts compare without case', () => {
    const p = policy({
      serviceAccounts: ['trainer'],
      secrets: ['registry-creds', 'wandb-key'],
      configMaps: ['train-config'],
      persistentVolumeClaims: ['datasets'],
      nfsServers: ['fs-1.example.com'],
      tolerations: ['example.com/reserved'],
    });
    expect(podPolicyRefusals(everything, p)).toEqual([]);
    const refused = podPolicyRefusals({ serviceAccountName: 'quartermaster', volumes: [{ secret: { secretName: 'quartermaster' } }] }, p);
    expect(refused.map((r) => r.field)).toEqual(['template.serviceAccountName', 'template.volumes[0].secret.secretName']);
    expect(refused[1]!.message).toContain('allows registry-creds, wandb-key');
  });

  it('`*` allows any name of its kind, and only it allows a toleration of every taint', () => {
    const p = policy({ secrets: ['*'], tolerations: ['example.com/reserved'] });
    expect(podPolicyRefusals({ imagePullSecrets: ['x'], volumes: [{ secret: { secretName: 'y' } }] }, p)).toEqual([]);
    expect(podPolicyRefusals({ tolerations: [{ operator: 'Exists' }] }, p).map((r) => r.field)).toEqual(['template.tolerations[0].key']);
    expect(podPolicyRefusals({ tolerations: [{ key: '', operator: 'Exists' }] }, policy({ tolerations: ['*'] }))).toEqual([]);
  });

  it('a stored template missing a name is refused unless the list allows any', () => {
    const stored = { volumes: [{ secret: {} }, { configMap: {} }], tolerations: [{}] };
    expect(podPolicyRefusals(stored, policy({ secrets: ['a'], configMaps: ['b'], tolerations: ['c'] })).map((r) => r.field)).toEqual([
      'template.volumes[0].secret.secretName',
      'template.volumes[1].configMap.name',
      'template.tolerations[0].key',
    ]);
    expect(podPolicyRefusals(stored, policy({ secrets: ['*'], configMaps: ['*'], tolerations: ['*'] }))).toEqual([]);
  });

  it("mounting a ServiceAccount token needs a named (allowed) ServiceAccount", () => {
    expect(podPolicyRefusals({ automountServiceAccountToken: true }, policy({ serviceAccounts: ['*'] })).map((r) => r.field)).toEqual([
      'template.automountServiceAccountToken',
    ]);
    expect(podPolicyRefusals({ automountServiceAccountToken: true, serviceAccountName: 'trainer' }, policy({ serviceAccounts: ['trainer'] }))).toEqual([]);
  });
});
