import { describe, expect, it } from '@jest/globals';
import type { V1Container, V1Pod, V1PodSpec } from '@kubernetes/client-node';
import type { KubeFlavor } from '../node-mapping.js';
import { workloadGang } from './workload-gang.js';
import { workloadChain, type OwnerLookup } from './workload-owner.js';
import type { KubeObject } from './workload.js';

const flavors: KubeFlavor[] = [
  {
    name: 'h100',
    resourceName: 'nvidia.com/gpu',
    nodeLabels: { 'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3' },
  },
  {
    name: 'a100',
    resourceName: 'nvidia.com/gpu',
    nodeLabels: { 'nvidia.com/gpu.product': 'NVIDIA-A100-SXM4-80GB' },
  },
  { name: 'trn1', resourceName: 'aws.amazon.com/neuron' },
  { name: 'trn1-cores', resourceName: 'aws.amazon.com/neuroncore' },
  { name: 'gaudi2', resourceName: 'habana.ai/gaudi' },
  {
    name: 'v5e',
    resourceName: 'google.com/tpu',
    nodeLabels: { 'cloud.google.com/gke-tpu-accelerator': 'tpu-v5-lite-podslice' },
  },
];
const options = { schedulerName: 'quartermaster' };

function container(
  limits: Record<string, string> = {},
  requests: Record<string, string> = { cpu: '2', memory: '8Gi' },
): V1Container {
  return {
    name: 'main',
    image: 'registry.example/train:1',
    command: ['torchrun'],
    resources: { requests, limits },
  };
}
function spec(extra: Partial<V1PodSpec> = {}, limits: Record<string, string> = {}): V1PodSpec {
  return { schedulerName: 'quartermaster', containers: [container(limits)], ...extra };
}
function job(
  name: string,
  podSpec: V1PodSpec,
  jobSpec: Record<string, unknown> = {},
  labels: Record<string, string> = {},
): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: 'ml', uid: `uid-${name}`, labels },
    spec: { template: { spec: podSpec }, ...jobSpec },
  };
}
function podOf(owner: KubeObject, podSpec: V1PodSpec, labels: Record<string, string> = {}): V1Pod {
  return {
    metadata: {
      name: `${owner.metadata!.name}-x`,
      namespace: 'ml',
      labels,
      ownerReferences: [
        {
          apiVersion: owner.apiVersion!,
          kind: owner.kind!,
          name: owner.metadata!.name!,
          uid: owner.metadata!.uid!,
          controller: true,
        },
      ],
    },
    spec: podSpec,
  };
}

describe('a gang from a workload', () => {
  it('an indexed Job with the team label: its parallelism, per-replica GPUs, every flavor counted in nvidia.com/gpu', () => {
    const podSpec = spec({}, { 'nvidia.com/gpu': '8' });
    const top = job(
      'llama',
      podSpec,
      { completionMode: 'Indexed', completions: 4, parallelism: 4 },
      { 'quartermaster.io/team': 'vision', 'quartermaster.io/priority-class': 'high' },
    );
    const result = workloadGang([top], podOf(top, podSpec), flavors, options);
    expect(result).toEqual({
      ok: true,
      value: expect.objectContaining({
        key: 'uid-llama',
        workload: { apiVersion: 'batch/v1', kind: 'Job', namespace: 'ml', name: 'llama', uid: 'uid-llama' },
        group: null,
        name: 'llama',
        team: 'vision',
        priorityClass: { name: 'high', from: 'label' },
        replicas: 4,
        minReplicas: 4,
        acceleratorsPerReplica: 8,
        cpuMillisPerReplica: 2000,
        memoryMiBPerReplica: 8192,
        resourceName: 'nvidia.com/gpu',
        flavors: ['h100', 'a100'],
        suspendable: true,
      }),
    });
  });

  it.each([
    ['aws.amazon.com/neuron', ['trn1']],
    ['aws.amazon.com/neuroncore', ['trn1-cores']],
    ['habana.ai/gaudi', ['gaudi2']],
    ['google.com/tpu', ['v5e']],
  ])('counts %s for the flavors of that resource', (resource, want) => {
    const podSpec = spec({}, { [resource]: '4' });
    const top = job('acc', podSpec, {}, { 'quartermaster.io/team': 'nlp' });
    const result = workloadGang([top], podOf(top, podSpec), flavors, options);
    expect(result.ok && [result.value.acceleratorsPerReplica, result.value.flavors]).toEqual([4, want]);
  });

  it("takes the team from the pod template when the workload has none; the pod's priorityClassName is asked (never its value)", () => {
    const podSpec = spec({ priority: 1000, priorityClassName: 'high' }, { 'nvidia.com/gpu': '1' });
    const top = job('p', podSpec);
    const result = workloadGang(
      [top],
      podOf(top, podSpec, { 'quartermaster.io/team': 'vision' }),
      flavors,
      options,
    );
    expect(result.ok && [result.value.team, result.value.priorityClass]).toEqual(['vision', { name: 'high', from: 'pod' }]);
    const plain = spec({ priority: 1000 }, { 'nvidia.com/gpu': '1' });
    const unnamed = workloadGang([job('q', plain)], podOf(job('q', plain), plain, { 'quartermaster.io/team': 'vision' }), flavors, options);
    expect(unnamed.ok && unnamed.value.priorityClass).toBeNull();
  });

  it('takes the priority-class label from the workload first, then its pod template; the label wins over priorityClassName', () => {
    const podSpec = spec({ priorityClassName: 'high' }, { 'nvidia.com/gpu': '1' });
    const top = job('p', podSpec, {}, { 'quartermaster.io/team': 'vision', 'quartermaster.io/priority-class': 'standard' });
    const both = workloadGang([top], podOf(top, podSpec, { 'quartermaster.io/priority-class': 'batch' }), flavors, options);
    expect(both.ok && both.value.priorityClass).toEqual({ name: 'standard', from: 'label' });
    const bare = job('q', podSpec, {}, { 'quartermaster.io/team': 'vision' });
    const fromPod = workloadGang([bare], podOf(bare, podSpec, { 'quartermaster.io/priority-class': 'batch' }), flavors, options);
    expect(fromPod.ok && fromPod.value.priorityClass).toEqual({ name: 'batch', from: 'label' });
  });

  it('refuses a numeric quartermaster.io/priority, on the workload or its pod template: members choose a class', () => {
    const podSpec = spec({}, { 'nvidia.com/gpu': '1' });
    const top = job('n', podSpec, {}, { 'quartermaster.io/team': 'vision' });
    expect(workloadGang([top], podOf(top, podSpec, { 'quartermaster.io/priority': '100' }), flavors, options)).toEqual({
      ok: false,
      issue: {
        field: 'quartermaster.io/priority',
        code: 'INVALID_WORKLOAD',
        message: expect.stringMatching(/^a numeric priority is not taken from Kubernetes \(got "100"\): use quartermaster.io\/priority-class .*numbers are for admins over REST$/),
      },
    });
  });

  it('selects flavors by nodeSelector, by required node affinity, or by the flavors annotation', () => {
    const bySelector = spec(
      { nodeSelector: { 'nvidia.com/gpu.product': 'NVIDIA-A100-SXM4-80GB' } },
      { 'nvidia.com/gpu': '8' },
    );
    const byAffinity = spec(
      {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                {
                  matchExpressions: [
                    { key: 'nvidia.com/gpu.product', operator: 'NotIn', values: ['NVIDIA-A100-SXM4-80GB'] },
                  ],
                },
              ],
            },
          },
        },
      },
      { 'nvidia.com/gpu': '8' },
    );
    const team = { 'quartermaster.io/team': 'vision' };
    const a = job('a', bySelector, {}, team);
    const b = job('b', byAffinity, {}, team);
    const c: KubeObject = { ...job('c', spec({}, { 'nvidia.com/gpu': '8' }), {}, team) };
    c.metadata!.annotations = { 'quartermaster.io/flavors': 'a100, h100' };
    const flavorsOf = (top: KubeObject) => {
      const r = workloadGang(
        [top],
        podOf(top, (top.spec as { template: { spec: V1PodSpec } }).template.spec),
        flavors,
        options,
      );
      return r.ok ? r.value.flavors : r.issue;
    };
    expect(flavorsOf(a)).toEqual(['a100']);
    expect(flavorsOf(b)).toEqual(['h100']);
    expect(flavorsOf(c)).toEqual(['a100', 'h100']);
    c.metadata!.annotations = { 'quartermaster.io/flavors': 'b200' };
    expect(flavorsOf(c)).toMatchObject({ field: 'quartermaster.io/flavors', message: 'unknown flavor b200' });
    c.metadata!.annotations = { 'quartermaster.io/flavors': 'trn1' };
    expect(flavorsOf(c)).toMatchObject({ field: 'quartermaster.io/flavors' });
    const none = job(
      'd',
      spec({ nodeSelector: { 'nvidia.com/gpu.product': 'NVIDIA-B200' } }, { 'nvidia.com/gpu': '8' }),
      {},
      team,
    );
    expect(flavorsOf(none)).toMatchObject({ field: 'spec.nodeSelector' });
  });

  it('a CPU-only workload naming the scheduler is a gang without accelerators, on any flavor', () => {
    const podSpec = spec();
    const top = job('pi', podSpec, {}, { 'quartermaster.io/team': 'vision' });
    const result = workloadGang([top], podOf(top, podSpec), flavors, options);
    expect(
      result.ok && [
        result.value.replicas,
        result.value.acceleratorsPerReplica,
        result.value.resourceName,
        result.value.flavors.length,
      ],
    ).toEqual([1, 0, null, flavors.length]);
  });

  it('a Ray head without GPUs and GPU workers: head plus workers, each role charged its own shape, workers above min elastic', () => {
    const head = spec();
    const worker = spec({}, { 'nvidia.com/gpu': '1' });
    const top: KubeObject = {
      apiVersion: 'ray.io/v1',
      kind: 'RayCluster',
      metadata: {
        name: 'raycluster-kuberay',
        namespace: 'ml',
        uid: 'uid-rc',
        labels: { 'quartermaster.io/team': 'nlp' },
      },
      spec: {
        headGroupSpec: { template: { spec: head } },
        workerGroupSpecs: [
          { groupName: 'gpu', replicas: 3, minReplicas: 1, maxReplicas: 3, template: { spec: worker } },
        ],
      },
    };
    const result = workloadGang([top], podOf(top, worker), flavors, options);
    expect(
      result.ok && [
        result.value.replicas,
        result.value.minReplicas,
        result.value.acceleratorsPerReplica,
        result.value.suspendable,
      ],
    ).toEqual([4, 2, 1, false]);
    expect(result.ok && result.value.roles).toEqual([
      { name: 'head', count: 1, minCount: 1 },
      { name: 'gpu', count: 3, minCount: 1 },
    ]);
    expect(result.ok && result.value.jobRoles).toEqual([
      { name: 'head', replicas: 1, minReplicas: 1, acceleratorsPerReplica: 0, cpuMillisPerReplica: 2000, memoryMiBPerReplica: 8192 },
      { name: 'gpu', replicas: 3, minReplicas: 1, acceleratorsPerReplica: 1, cpuMillisPerReplica: 2000, memoryMiBPerReplica: 8192 },
    ]);
  });

  it('roles of different shapes are a multi-role job: a CPU-only driver naming the scheduler holds no GPU; same shapes stay one role', () => {
    const driver = spec();
    const workers = spec({}, { 'nvidia.com/gpu': '8' });
    const jobSet = (driverSpec: V1PodSpec, groupName = 'Driver.Main'): KubeObject => ({
      apiVersion: 'jobset.x-k8s.io/v1alpha2',
      kind: 'JobSet',
      metadata: { name: 'js', namespace: 'ml', uid: 'uid-js', labels: { 'quartermaster.io/team': 'vision' } },
      spec: {
        replicatedJobs: [
          { name: groupName, template: { spec: { template: { spec: driverSpec } } } },
          { name: 'workers', replicas: 4, template: { spec: { parallelism: 1, template: { spec: workers } } } },
        ],
      },
    });
    const mixed = workloadGang([jobSet(driver)], podOf(jobSet(driver), workers), flavors, options);
    // 32 GPUs charged, not 40: the driver's role asks for none. Role names are DNS labels (jobRoleName).
    expect(mixed.ok && mixed.value.jobRoles).toEqual([
      { name: 'driver-main', replicas: 1, minReplicas: 1, acceleratorsPerReplica: 0, cpuMillisPerReplica: 2000, memoryMiBPerReplica: 8192 },
      { name: 'workers', replicas: 4, minReplicas: 4, acceleratorsPerReplica: 8, cpuMillisPerReplica: 2000, memoryMiBPerReplica: 8192 },
    ]);
    expect(mixed.ok && [mixed.value.replicas, mixed.value.acceleratorsPerReplica]).toEqual([5, 8]);

    const same = workloadGang([jobSet(workers)], podOf(jobSet(workers), workers), flavors, options);
    expect(same.ok && [same.value.replicas, same.value.acceleratorsPerReplica, same.value.jobRoles]).toEqual([5, 8, null]);
    // Two roles whose names meet as one DNS label cannot be told apart: one uniform gang at the largest shape.
    const clash: KubeObject = jobSet(driver, 'workers.');
    const clashed = workloadGang([clash], podOf(clash, workers), flavors, options);
    expect(clashed.ok && [clashed.value.acceleratorsPerReplica, clashed.value.jobRoles]).toEqual([8, null]);
  });

  it('leaves out roles that are not Quartermaster’s (another scheduler, no accelerator)', () => {
    const driver: V1PodSpec = { containers: [container()] };
    const workers = spec({}, { 'nvidia.com/gpu': '8' });
    const top: KubeObject = {
      apiVersion: 'jobset.x-k8s.io/v1alpha2',
      kind: 'JobSet',
      metadata: { name: 'js', namespace: 'ml', uid: 'uid-js', labels: { 'quartermaster.io/team': 'vision' } },
      spec: {
        replicatedJobs: [
          { name: 'driver', template: { spec: { template: { spec: driver } } } },
          {
            name: 'workers',
            replicas: 2,
            template: { spec: { parallelism: 4, completions: 4, template: { spec: workers } } },
          },
        ],
      },
    };
    const result = workloadGang([top], podOf(top, workers), flavors, options);
    expect(result.ok && [result.value.replicas, result.value.roles.map((r) => r.name)]).toEqual([
      8,
      ['workers'],
    ]);
  });

  it('one gang per LeaderWorkerSet group, named after it', () => {
    const podSpec = spec({}, { 'google.com/tpu': '4' });
    const top: KubeObject = {
      apiVersion: 'leaderworkerset.x-k8s.io/v1',
      kind: 'LeaderWorkerSet',
      metadata: { name: 'vllm', namespace: 'ml', uid: 'uid-lws', labels: { 'quartermaster.io/team': 'nlp' } },
      spec: { replicas: 2, leaderWorkerTemplate: { size: 4, workerTemplate: { spec: podSpec } } },
    };
    const pod = podOf(top, podSpec, { 'leaderworkerset.sigs.k8s.io/group-index': '1' });
    const result = workloadGang([top], pod, flavors, options);
    expect(
      result.ok && [
        result.value.key,
        result.value.name,
        result.value.group,
        result.value.replicas,
        result.value.flavors,
      ],
    ).toEqual(['uid-lws/1', 'vllm-1', '1', 4, ['v5e']]);
    expect(workloadGang([top], podOf(top, podSpec), flavors, options)).toMatchObject({
      ok: false,
      issue: { field: 'metadata.labels' },
    });
  });

  it.each([
    ['no team', {}, 'quartermaster.io/team'],
    ['a team that is not a DNS label', { 'quartermaster.io/team': 'Vision_Team' }, 'quartermaster.io/team'],
    [
      'a numeric priority',
      { 'quartermaster.io/team': 'vision', 'quartermaster.io/priority': '100' },
      'quartermaster.io/priority',
    ],
    [
      'a priority class that cannot be a class name',
      { 'quartermaster.io/team': 'vision', 'quartermaster.io/priority-class': 'High_Prio' },
      'quartermaster.io/priority-class',
    ],
  ])('reports %s', (_name, labels, field) => {
    const podSpec = spec({}, { 'nvidia.com/gpu': '1' });
    const top = job('bad', podSpec, {}, labels);
    expect(workloadGang([top], podOf(top, podSpec), flavors, options)).toMatchObject({
      ok: false,
      issue: { field, code: 'INVALID_WORKLOAD' },
    });
  });

  it('reports pods asking for two accelerator resources, and malformed quantities', () => {
    const two = spec({}, { 'nvidia.com/gpu': '1', 'google.com/tpu': '4' });
    const a = job('two', two, {}, { 'quartermaster.io/team': 'vision' });
    expect(workloadGang([a], podOf(a, two), flavors, options)).toMatchObject({
      ok: false,
      issue: { field: 'resources' },
    });
    const bad: V1PodSpec = {
      schedulerName: 'quartermaster',
      containers: [container({ 'nvidia.com/gpu': 'lots' })],
    };
    const b = job('bad-q', bad, {}, { 'quartermaster.io/team': 'vision' });
    expect(workloadGang([b], podOf(b, bad), flavors, options)).toMatchObject({
      ok: false,
      issue: { field: 'resources' },
    });
  });

  it('gives a pod that asks for accelerators only through DRA ResourceClaims a clear DRA_ONLY issue', () => {
    const claims: V1PodSpec = {
      schedulerName: 'quartermaster',
      resourceClaims: [{ name: 'gpus', resourceClaimTemplateName: 'eight-h100' }],
      containers: [{ name: 'main', image: 'x', resources: { claims: [{ name: 'gpus' }] } }],
    };
    const top = job('dra', claims, {}, { 'quartermaster.io/team': 'vision' });
    const result = workloadGang([top], podOf(top, claims), flavors, options);
    expect(result).toMatchObject({ ok: false, issue: { code: 'DRA_ONLY', field: 'spec.resourceClaims' } });
    expect(!result.ok && result.issue.message).toContain('DRA ResourceClaims');
  });

  it('makes a DNS label of a long or dotted workload name', () => {
    const podSpec = spec({}, { 'nvidia.com/gpu': '1' });
    const top = job(`train.v2.${'x'.repeat(80)}`, podSpec, {}, { 'quartermaster.io/team': 'vision' });
    const result = workloadGang([top], podOf(top, podSpec), flavors, options);
    expect(result.ok && result.value.name).toMatch(/^train-v2-x+$/);
    expect(result.ok && result.value.name.length).toBeLessThanOrEqual(63);
  });
});

describe('the node selector of a workload gang (the core places by it: ADR 0017)', () => {
  const team = { 'quartermaster.io/team': 'vision' };
  const required = (...terms: { key: string; operator: string; values?: string[] }[][]): Partial<V1PodSpec> => ({
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: terms.map((matchExpressions) => ({ matchExpressions })),
        },
      },
    },
  });
  const gangOf = (extra: Partial<V1PodSpec>) => {
    const podSpec = spec(extra, { 'nvidia.com/gpu': '8' });
    const top = job('sel', podSpec, {}, team);
    return workloadGang([top], podOf(top, podSpec), flavors, options);
  };
  const ZONE = 'topology.kubernetes.io/zone';

  it('carries the pods’ nodeSelector into the job template', () => {
    const result = gangOf({ nodeSelector: { [ZONE]: 'eu-1a', 'nvidia.com/gpu.product': 'NVIDIA-A100-SXM4-80GB' } });
    expect(result.ok && [result.value.flavors, result.value.template.nodeSelector]).toEqual([
      ['a100'],
      { [ZONE]: 'eu-1a', 'nvidia.com/gpu.product': 'NVIDIA-A100-SXM4-80GB' },
    ]);
    const plain = gangOf({});
    expect(plain.ok && plain.value.template.nodeSelector).toBeUndefined();
  });

  it('reads a required affinity In with one value as a label; expressions on flavor keys are the flavor’s', () => {
    const result = gangOf(
      required([
        { key: ZONE, operator: 'In', values: ['eu-1b'] },
        { key: 'nvidia.com/gpu.product', operator: 'NotIn', values: ['NVIDIA-A100-SXM4-80GB'] },
      ]),
    );
    expect(result.ok && [result.value.flavors, result.value.template.nodeSelector]).toEqual([['h100'], { [ZONE]: 'eu-1b' }]);
  });

  it('refuses affinity the core cannot hold the pods to, naming the field', () => {
    for (const extra of [
      required([{ key: ZONE, operator: 'In', values: ['eu-1a', 'eu-1b'] }]),
      required([{ key: 'pool', operator: 'Exists' }]),
      required([{ key: ZONE, operator: 'In', values: ['eu-1a'] }], [{ key: ZONE, operator: 'In', values: ['eu-1b'] }]),
    ]) {
      const result = gangOf(extra);
      expect(result.ok ? result.value : result.issue).toMatchObject({
        field: 'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution',
        code: 'INVALID_WORKLOAD',
      });
    }
    const conflicting = gangOf({ nodeSelector: { [ZONE]: 'eu-1a' }, ...required([{ key: ZONE, operator: 'In', values: ['eu-1b'] }]) });
    expect(conflicting.ok ? conflicting.value : conflicting.issue.message).toContain(`${ZONE}=eu-1a and ${ZONE}=eu-1b`);
  });

  it('a selector on every role of the gang: their union', () => {
    const head = spec({ nodeSelector: { pool: 'ray' } });
    const worker = spec({ nodeSelector: { [ZONE]: 'eu-1a' } }, { 'nvidia.com/gpu': '8' });
    const top: KubeObject = {
      apiVersion: 'ray.io/v1',
      kind: 'RayCluster',
      metadata: { name: 'rc', namespace: 'ml', uid: 'uid-rc', labels: team },
      spec: {
        headGroupSpec: { template: { spec: head } },
        workerGroupSpecs: [{ groupName: 'w', replicas: 2, template: { spec: worker } }],
      },
    };
    const result = workloadGang([top], podOf(top, worker), flavors, options);
    expect(result.ok && result.value.template.nodeSelector).toEqual({ pool: 'ray', [ZONE]: 'eu-1a' });
  });

  it('named flavors must suit the pods’ selector too', () => {
    const podSpec = spec({ nodeSelector: { 'nvidia.com/gpu.product': 'NVIDIA-A100-SXM4-80GB' } }, { 'nvidia.com/gpu': '8' });
    const top = job('named', podSpec, {}, team);
    top.metadata!.annotations = { 'quartermaster.io/flavors': 'h100,a100' };
    const result = workloadGang([top], podOf(top, podSpec), flavors, options);
    expect(result.ok && result.value.flavors).toEqual(['a100']);
    top.metadata!.annotations = { 'quartermaster.io/flavors': 'h100' };
    const none = workloadGang([top], podOf(top, podSpec), flavors, options);
    expect(none.ok ? none.value : none.issue).toMatchObject({ field: 'quartermaster.io/flavors' });
  });

  it('a label named like an Object.prototype member (constructor, toString) is a label like any other', () => {
    const result = gangOf({ nodeSelector: { constructor: 'x', toString: 'y' } });
    expect(result.ok && [result.value.flavors, result.value.template.nodeSelector]).toEqual([
      ['h100', 'a100'],
      { constructor: 'x', toString: 'y' },
    ]);
    const byAffinity = gangOf(required([{ key: 'constructor', operator: 'In', values: ['x'] }]));
    expect(byAffinity.ok && byAffinity.value.flavors).toEqual(['h100', 'a100']);
  });
});

describe('the owner chain of a pod', () => {
  const objects = new Map<string, KubeObject>();
  const put = (o: KubeObject): KubeObject => {
    objects.set(`${o.kind}/${o.metadata!.name}`, o);
    return o;
  };
  const owned = (o: KubeObject, owner: KubeObject): KubeObject => ({
    ...o,
    metadata: {
      ...o.metadata,
      ownerReferences: [
        {
          apiVersion: owner.apiVersion!,
          kind: owner.kind!,
          name: owner.metadata!.name!,
          uid: owner.metadata!.uid!,
          controller: true,
        },
      ],
    },
  });
  const lookup: OwnerLookup = (ref) => Promise.resolve(objects.get(`${ref.kind}/${ref.name}`) ?? null);
  const trainJob = put({
    apiVersion: 'trainer.kubeflow.org/v1alpha1',
    kind: 'TrainJob',
    metadata: { name: 't', uid: 'u-t' },
  });
  const jobSet = put(
    owned(
      { apiVersion: 'jobset.x-k8s.io/v1alpha2', kind: 'JobSet', metadata: { name: 't', uid: 'u-js' } },
      trainJob,
    ),
  );
  const batch = put(
    owned({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 't-node-0', uid: 'u-j' } }, jobSet),
  );
  const lws = put({
    apiVersion: 'leaderworkerset.x-k8s.io/v1',
    kind: 'LeaderWorkerSet',
    metadata: { name: 'vllm', uid: 'u-lws' },
  });
  const leaderSts = put(
    owned({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'vllm', uid: 'u-lsts' } }, lws),
  );
  const leader = put(
    owned({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'vllm-0', uid: 'u-leader' } }, leaderSts),
  );
  const workerSts = put(
    owned(
      { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'vllm-0', uid: 'u-wsts' } },
      leader,
    ),
  );
  const cron = put({ apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'nightly', uid: 'u-cron' } });
  const cronJob = put(
    owned({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'nightly-1', uid: 'u-cj' } }, cron),
  );
  const deployment = put({
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: 'web', uid: 'u-rs' },
  });
  const names = (chain: KubeObject[] | null) => chain?.map((o) => `${o.kind}/${o.metadata!.name}`) ?? null;

  it('climbs to the top-level workload: Job → JobSet → TrainJob', async () => {
    expect(
      names(await workloadChain(owned({ kind: 'Pod', metadata: { name: 'p' } }, batch) as V1Pod, lookup)),
    ).toEqual(['Job/t-node-0', 'JobSet/t', 'TrainJob/t']);
  });

  it('climbs from an LWS worker through its StatefulSet, the leader pod and the leader StatefulSet', async () => {
    expect(
      names(
        await workloadChain(
          owned({ kind: 'Pod', metadata: { name: 'vllm-0-1' } }, workerSts) as V1Pod,
          lookup,
        ),
      ),
    ).toEqual(['StatefulSet/vllm-0', 'Pod/vllm-0', 'StatefulSet/vllm', 'LeaderWorkerSet/vllm']);
  });

  it('stops at kinds it does not schedule: a CronJob’s Job is its own workload, a ReplicaSet’s pod is none', async () => {
    expect(
      names(await workloadChain(owned({ kind: 'Pod', metadata: { name: 'c' } }, cronJob) as V1Pod, lookup)),
    ).toEqual(['Job/nightly-1']);
    expect(
      await workloadChain(owned({ kind: 'Pod', metadata: { name: 'w' } }, deployment) as V1Pod, lookup),
    ).toBeNull();
    expect(await workloadChain({ metadata: { name: 'bare' } }, lookup)).toBeNull();
  });

  it('gives up when an owner is gone or was replaced (uid differs)', async () => {
    const ghost = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'gone', uid: 'u-gone' } };
    expect(
      await workloadChain(owned({ kind: 'Pod', metadata: { name: 'g' } }, ghost) as V1Pod, lookup),
    ).toBeNull();
    const replaced = { ...batch, metadata: { ...batch.metadata, uid: 'u-old' } };
    expect(
      await workloadChain(owned({ kind: 'Pod', metadata: { name: 'r' } }, replaced) as V1Pod, lookup),
    ).toBeNull();
  });
});
