import { describe, expect, it } from '@jest/globals';
import { PodManifestError, podManifestForReplica, podNameForReplica, type PodJob } from './pod-manifest.js';

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
