import { describe, expect, it } from '@jest/globals';
import { PodManifestError, podManifestForReplica, podNameForReplica, podTemplateOf, type PodJob } from './pod-manifest.js';
import { DEFAULT_MASTER_PORT, rendezvousEnv, rendezvousServiceManifest, rendezvousServiceName, replicaHostname } from './rendezvous.js';

const job: PodJob = {
  id: '0b7c8f1e-2d3a-4c5b-8e9f-0a1b2c3d4e5f',
  name: 'llama-ft-7',
  team: 'vision',
  priority: 100,
  replicas: 4,
  acceleratorsPerReplica: 8,
  template: {
    image: 'registry.example/llama:2',
    command: ['torchrun'],
    args: ['--nproc-per-node=8', 'train.py'],
    env: { EPOCHS: '3', QM_GANG_SIZE: 'overridden' },
    cpuMillis: 8000,
    memoryMiB: 65536,
  },
  flavor: { name: 'h100-80gb', resourceName: 'nvidia.com/gpu', nodeLabels: { 'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3' } },
};

describe('podManifestForReplica', () => {
  it('a replica of a multi-role job: its role in env and label; a CPU-only role asks for no accelerator and is not pinned to the flavor', () => {
    const launcher = podManifestForReplica({ ...job, acceleratorsPerReplica: 0, template: { ...job.template, cpuMillis: 2000, memoryMiB: 4096 }, role: { name: 'launcher', index: 0 } }, 0, 'cpu-1');
    const worker = podManifestForReplica({ ...job, role: { name: 'worker', index: 2 } }, 3, 'gpu-1');
    expect(launcher.metadata!.labels!['quartermaster.io/role']).toBe('launcher');
    expect(launcher.spec!.containers[0]!.env).toEqual(expect.arrayContaining([{ name: 'QM_ROLE', value: 'launcher' }, { name: 'QM_ROLE_INDEX', value: '0' }]));
    expect(launcher.spec!.containers[0]!.resources).toEqual({ requests: { cpu: '2000m', memory: '4096Mi' } });
    expect(launcher.spec!.nodeSelector).toBeUndefined();
    expect(worker.spec!.containers[0]!.env).toEqual(expect.arrayContaining([{ name: 'QM_ROLE', value: 'worker' }, { name: 'QM_ROLE_INDEX', value: '2' }]));
    expect(worker.spec!.containers[0]!.resources!.limits).toEqual({ 'nvidia.com/gpu': '8' });
    expect(worker.spec!.nodeSelector).toEqual({ 'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3' });
    expect(podManifestForReplica(job, 0).spec!.containers[0]!.env!.some((e) => e.name === 'QM_ROLE')).toBe(false);
  });

  it('builds the pod of one replica from the job template', () => {
    const pod = podManifestForReplica(job, 2, undefined, { namespace: 'research' });
    expect(pod.metadata).toEqual({
      name: 'llama-ft-7-0b7c8f1e-2d3a-4c5b-8e9f-0a1b2c3d4e5f-2',
      namespace: 'research',
      labels: {
        'app.kubernetes.io/managed-by': 'quartermaster',
        'quartermaster.io/job-id': job.id,
        'quartermaster.io/team': 'vision',
        'quartermaster.io/gang': job.id,
        'quartermaster.io/replica': '2',
      },
      annotations: {
        'quartermaster.io/job-id': job.id,
        'quartermaster.io/team': 'vision',
        'quartermaster.io/gang': job.id,
        'quartermaster.io/replica': '2',
        'quartermaster.io/gang-size': '4',
        'quartermaster.io/flavor': 'h100-80gb',
        'quartermaster.io/priority': '100',
      },
    });
    expect(pod.spec?.schedulerName).toBe('quartermaster');
    expect(pod.spec?.nodeName).toBeUndefined();
    expect(pod.spec?.restartPolicy).toBe('Never');
    expect(pod.spec?.nodeSelector).toEqual({ 'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3' });
    expect(pod.spec?.tolerations).toEqual([{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }]);
    const [container] = pod.spec!.containers;
    expect(container).toEqual({
      name: 'main',
      image: 'registry.example/llama:2',
      command: ['torchrun'],
      args: ['--nproc-per-node=8', 'train.py'],
      env: [
        { name: 'QM_JOB_ID', value: job.id },
        { name: 'QM_REPLICA_INDEX', value: '2' },
        { name: 'QM_GANG_SIZE', value: 'overridden' },
        { name: 'EPOCHS', value: '3' },
      ],
      resources: {
        requests: { cpu: '8000m', memory: '65536Mi', 'nvidia.com/gpu': '8' },
        limits: { 'nvidia.com/gpu': '8' },
      },
    });
  });

  it("meets Pod Security restricted in a namespace that enforces it, and sets nothing otherwise", () => {
    const restricted = podManifestForReplica(job, 0, undefined, { namespace: 'vision', restricted: true });
    expect(restricted.spec?.securityContext).toEqual({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(restricted.spec?.containers[0]?.securityContext).toEqual({ allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
    const plain = podManifestForReplica(job, 0, undefined, { namespace: 'vision' });
    expect(plain.spec?.securityContext).toBeUndefined();
    expect(plain.spec?.containers[0]?.securityContext).toBeUndefined();
  });

  it('is deterministic and pre-binds when given a node', () => {
    expect(podManifestForReplica(job, 0)).toEqual(podManifestForReplica(job, 0));
    expect(podManifestForReplica(job, 0).metadata?.namespace).toBe('default');
    expect(podManifestForReplica(job, 0, 'gpu-17').spec?.nodeName).toBe('gpu-17');
  });

  it('uses the flavor\'s resource and the configured scheduler name', () => {
    const trn = { ...job, flavor: { name: 'trn1', resourceName: 'aws.amazon.com/neuron' } };
    const pod = podManifestForReplica(trn, 0, undefined, { schedulerName: 'qm-staging' });
    expect(pod.spec?.schedulerName).toBe('qm-staging');
    expect(pod.spec?.nodeSelector).toBeUndefined();
    expect(pod.spec?.containers[0]?.resources?.limits).toEqual({ 'aws.amazon.com/neuron': '8' });
  });

  it('omits empty parts: no accelerators, no CPU/memory request, no command', () => {
    const cpuOnly = { ...job, acceleratorsPerReplica: 0, template: { image: 'busybox' } };
    const container = podManifestForReplica(cpuOnly, 0).spec?.containers[0];
    expect(container?.resources).toEqual({});
    expect(container?.command).toBeUndefined();
    expect(container?.args).toBeUndefined();
  });

  it("selects the template's nodeSelector with the flavor's node labels", () => {
    const pod = podManifestForReplica({ ...job, template: { ...job.template, nodeSelector: { 'topology.kubernetes.io/zone': 'us-east-1a' } } }, 0);
    expect(pod.spec?.nodeSelector).toEqual({ 'topology.kubernetes.io/zone': 'us-east-1a', 'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3' });
  });

  it("a job that checkpoints gets its grace period as the pod's termination grace period; others keep Kubernetes' default", () => {
    expect(podManifestForReplica({ ...job, terminationGracePeriodSeconds: 45 }, 0).spec?.terminationGracePeriodSeconds).toBe(45);
    expect(podManifestForReplica(job, 0).spec).not.toHaveProperty('terminationGracePeriodSeconds');
    expect(() => podManifestForReplica({ ...job, terminationGracePeriodSeconds: -1 }, 0)).toThrow('job.terminationGracePeriodSeconds');
  });

  it('mounts no ServiceAccount token unless the template names its ServiceAccount and asks for the token', () => {
    expect(podManifestForReplica(job, 0).spec?.automountServiceAccountToken).toBe(false);
    const named = (extra: Partial<PodJob['template']>): PodJob => ({ ...job, template: { ...job.template, ...extra } });
    expect(podManifestForReplica(named({ serviceAccountName: 'trainer' }), 0).spec?.automountServiceAccountToken).toBe(false);
    expect(podManifestForReplica(named({ automountServiceAccountToken: true }), 0).spec?.automountServiceAccountToken).toBe(false);
    expect(podManifestForReplica(named({ serviceAccountName: 'trainer', automountServiceAccountToken: true }), 0).spec?.automountServiceAccountToken).toBe(true);
    expect(podTemplateOf({ image: 'x', serviceAccountName: 'trainer', automountServiceAccountToken: true }).automountServiceAccountToken).toBe(true);
    expect(podTemplateOf({ image: 'x', automountServiceAccountToken: 'yes' })).not.toHaveProperty('automountServiceAccountToken');
  });

  it("carries the template's volumes, mounts, pull secrets, tolerations and service account into the pod", () => {
    const withPodParts: PodJob = {
      ...job,
      template: {
        ...job.template,
        volumes: [
          { name: 'data', persistentVolumeClaim: { claimName: 'datasets', readOnly: true } },
          { name: 'shm', emptyDir: { medium: 'Memory', sizeLimit: '64Gi' } },
        ],
        volumeMounts: [
          { name: 'data', mountPath: '/data', readOnly: true },
          { name: 'shm', mountPath: '/dev/shm' },
        ],
        imagePullSecrets: ['registry-creds'],
        tolerations: [{ key: 'cloud.google.com/gke-spot', operator: 'Equal', value: 'true', effect: 'NoSchedule' }],
        serviceAccountName: 'trainer',
      },
    };
    const pod = podManifestForReplica(withPodParts, 0);
    expect(pod.spec).toMatchObject({
      serviceAccountName: 'trainer',
      imagePullSecrets: [{ name: 'registry-creds' }],
      volumes: withPodParts.template.volumes,
      tolerations: [
        { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' },
        { key: 'cloud.google.com/gke-spot', operator: 'Equal', value: 'true', effect: 'NoSchedule' },
      ],
    });
    expect(pod.spec?.containers[0]?.volumeMounts).toEqual(withPodParts.template.volumeMounts);
    expect(pod.spec?.volumes).not.toBe(withPodParts.template.volumes); // a copy
  });

  it('with a rendezvous: a stable hostname in the gang Service and the launcher env (torchrun and PET_*)', () => {
    const rendezvous = { service: rendezvousServiceName(job.id), namespace: 'research', port: DEFAULT_MASTER_PORT, replicas: 4 };
    const pod = podManifestForReplica(job, 2, undefined, { namespace: 'research', rendezvous });
    expect(rendezvous.service).toBe('qm-0b7c8f1e-2d3a-4c5b-8e9f-0a1b2c3d4e5f');
    expect(pod.spec).toMatchObject({ hostname: 'llama-ft-7-2', subdomain: rendezvous.service });
    const env = Object.fromEntries(pod.spec!.containers[0]!.env!.map((e) => [e.name, e.value]));
    expect(env).toMatchObject({
      MASTER_ADDR: `llama-ft-7-0.${rendezvous.service}`,
      MASTER_PORT: '29500',
      NNODES: '4',
      NODE_RANK: '2',
      LOCAL_WORLD_SIZE: '8',
      WORLD_SIZE: '32',
      RANK: '16',
      PET_MASTER_ADDR: `llama-ft-7-0.${rendezvous.service}`,
      PET_MASTER_PORT: '29500',
      PET_NNODES: '4',
      PET_NODE_RANK: '2',
      PET_NPROC_PER_NODE: '8',
      EPOCHS: '3',
    });
    // The template's env wins (a port of its own); a single replica rendezvouses with itself.
    const own = podManifestForReplica({ ...job, template: { ...job.template, env: { MASTER_PORT: '23456' } } }, 0, undefined, { rendezvous: { ...rendezvous, port: 23456 } });
    expect(own.spec!.containers[0]!.env).toContainEqual({ name: 'MASTER_PORT', value: '23456' });
    expect(rendezvousEnv({ name: 'solo', acceleratorsPerReplica: 0 }, 0, { ...rendezvous, replicas: 1 })).toMatchObject({ MASTER_ADDR: 'localhost', WORLD_SIZE: '1', LOCAL_WORLD_SIZE: '1' });
    expect(podManifestForReplica(job, 0).spec?.subdomain).toBeUndefined();
  });

  it('rendezvous names are DNS labels for any job name and id', () => {
    expect(replicaHostname('A'.repeat(80), 12)).toBe(`${'a'.repeat(50)}-12`);
    expect(replicaHostname('---', 0)).toBe('replica-0');
    expect(rendezvousServiceName('0B7C8F1E-2D3A-4C5B-8E9F-0A1B2C3D4E5F')).toMatch(/^qm-[a-z0-9-]{36}$/);
    const manifest = rendezvousServiceManifest('id-1', { service: 'qm-id-1', namespace: 'ns', port: 29500, replicas: 2 });
    expect(manifest.spec).toEqual({
      clusterIP: 'None',
      selector: { 'quartermaster.io/job-id': 'id-1' },
      publishNotReadyAddresses: true,
      ports: [{ name: 'rendezvous', port: 29500, protocol: 'TCP' }],
    });
  });

  it('reads a stored template back with every pod part, leaving out fields of the wrong shape', () => {
    const stored = {
      image: 'x',
      command: ['torchrun'],
      env: { A: '1' },
      cpuMillis: 1000,
      volumes: [{ name: 'shm', emptyDir: {} }],
      volumeMounts: [{ name: 'shm', mountPath: '/dev/shm' }],
      imagePullSecrets: ['creds'],
      tolerations: [{ operator: 'Exists' }],
      serviceAccountName: 'trainer',
      nodeSelector: { 'topology.kubernetes.io/zone': 'a' },
      importedFrom: { namespace: 'ns', gang: 'g' },
    };
    expect(podTemplateOf(stored)).toEqual({
      image: 'x',
      command: ['torchrun'],
      env: { A: '1' },
      cpuMillis: 1000,
      volumes: stored.volumes,
      volumeMounts: stored.volumeMounts,
      imagePullSecrets: ['creds'],
      tolerations: stored.tolerations,
      serviceAccountName: 'trainer',
      nodeSelector: { 'topology.kubernetes.io/zone': 'a' },
    });
    expect(podTemplateOf({ image: 7, env: ['x'], volumes: 'none', serviceAccountName: 1, nodeSelector: { zone: 1 } })).toEqual({ image: '' });
  });

  it('names pods within Kubernetes limits from any job name and id', () => {
    expect(podNameForReplica({ id: 'ABC_123', name: 'My Job!!' }, 3)).toBe('my-job-abc-123-3');
    const long = podNameForReplica({ id: 'x', name: 'a'.repeat(100) }, 0);
    expect(long).toBe(`${'a'.repeat(40)}-x-0`);
  });

  it.each([
    ['replica out of range', () => podManifestForReplica(job, 4), /replica must be < job.replicas/],
    ['negative replica', () => podManifestForReplica(job, -1), /replica must be an integer ≥ 0/],
    ['fractional accelerators', () => podManifestForReplica({ ...job, acceleratorsPerReplica: 1.5 }, 0), /acceleratorsPerReplica/],
    ['empty image', () => podManifestForReplica({ ...job, template: { image: ' ' } }, 0), /image must not be empty/],
    ['bad namespace', () => podManifestForReplica(job, 0, undefined, { namespace: 'Not_A_Namespace' }), /namespace/],
    ['bad team label', () => podManifestForReplica({ ...job, team: 'x'.repeat(64) }, 0), /job.team/],
    ['bad env name', () => podManifestForReplica({ ...job, template: { image: 'x', env: { '1BAD': 'v' } } }, 0), /env.1BAD/],
    ['empty node', () => podManifestForReplica(job, 0, ''), /node must not be empty/],
  ])('rejects %s', (_case, build, message) => {
    expect(build).toThrow(PodManifestError);
    expect(build).toThrow(message);
  });
});
