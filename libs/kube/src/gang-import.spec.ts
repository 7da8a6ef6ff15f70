import { describe, expect, it } from '@jest/globals';
import type { V1Pod } from '@kubernetes/client-node';
import { asOnePodGang, gangImportsFromPods, isGangImportCandidate, isLoneAcceleratorPod, onePodGangName, parseGangAnnotations } from './gang-import.js';
import type { KubeFlavor } from './node-mapping.js';

const flavors: KubeFlavor[] = [
  { name: 'h100-80gb', resourceName: 'nvidia.com/gpu' },
  { name: 'a100-80gb', resourceName: 'nvidia.com/gpu' },
  { name: 'trn1', resourceName: 'aws.amazon.com/neuron' },
];

function foreign(name: string, annotations: Record<string, string>, options: { namespace?: string; gpus?: string; resource?: string; nodeName?: string } = {}): V1Pod {
  return {
    metadata: { name, namespace: options.namespace ?? 'ml', uid: `uid-${name}`, annotations },
    spec: {
      nodeName: options.nodeName,
      containers: [
        {
          name: 'trainer',
          image: 'registry.example/train:5',
          command: ['python'],
          args: ['train.py'],
          env: [{ name: 'LR', value: '0.1' }, { name: 'FROM_SECRET', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }],
          resources: {
            requests: { cpu: '6', memory: '48Gi' },
            limits: { [options.resource ?? 'nvidia.com/gpu']: options.gpus ?? '4' },
          },
        },
      ],
    },
    status: { phase: 'Pending' },
  };
}

const gang = { 'quartermaster.io/team': 'vision', 'quartermaster.io/gang': 'bert-sweep', 'quartermaster.io/gang-size': '2' };

describe('gang import from annotated foreign pods', () => {
  it('turns a complete gang into one job-shaped record', () => {
    const pods = [foreign('worker-1', { ...gang, 'quartermaster.io/priority-class': 'high' }, { nodeName: 'gpu-3' }), foreign('worker-0', { ...gang, 'quartermaster.io/priority-class': 'high' })];
    const { gangs, issues } = gangImportsFromPods(pods, flavors);
    expect(issues).toEqual([]);
    expect(gangs).toEqual([
      {
        key: 'ml/bert-sweep',
        namespace: 'ml',
        name: 'bert-sweep',
        team: 'vision',
        kind: 'training',
        priorityClass: { name: 'high', from: 'label' },
        preemptible: true,
        replicas: 2,
        minReplicas: 2,
        acceleratorsPerReplica: 4,
        flavors: ['h100-80gb', 'a100-80gb'],
        topology: { level: 'none' },
        expectedRuntimeSeconds: null,
        template: { image: 'registry.example/train:5', command: ['python'], args: ['train.py'], env: { LR: '0.1' }, cpuMillis: 6000, memoryMiB: 49152 },
        pods: [
          { namespace: 'ml', name: 'worker-0', uid: 'uid-worker-0', nodeName: null, phase: 'Pending' },
          { namespace: 'ml', name: 'worker-1', uid: 'uid-worker-1', nodeName: 'gpu-3', phase: 'Pending' },
        ],
        complete: true,
      },
    ]);
  });

  it("carries the node selector its pods share into the job's template (the core places the gang only on nodes with those labels)", () => {
    const zone = 'topology.kubernetes.io/zone';
    const pods = [foreign('w0', gang), foreign('w1', gang)];
    pods[0]!.spec!.nodeSelector = { [zone]: 'us-east-1a', pool: 'reserved', 'only-w0': 'x' };
    pods[1]!.spec!.nodeSelector = { [zone]: 'us-east-1a', pool: 'reserved' };
    expect(gangImportsFromPods(pods, flavors).gangs[0]!.template.nodeSelector).toEqual({ [zone]: 'us-east-1a', pool: 'reserved' });
    expect(gangImportsFromPods([foreign('w0', gang), foreign('w1', gang)], flavors).gangs[0]!.template).not.toHaveProperty('nodeSelector');
  });

  it('narrows to the annotated flavor, and reports a gang still being created as incomplete', () => {
    const { gangs } = gangImportsFromPods([foreign('w0', { ...gang, 'quartermaster.io/flavor': 'a100-80gb' })], flavors);
    expect(gangs[0]).toMatchObject({ flavors: ['a100-80gb'], complete: false, priorityClass: null });
  });

  it('finds the flavor from the resource the pods request', () => {
    const { gangs } = gangImportsFromPods([foreign('w0', { ...gang, 'quartermaster.io/gang-size': '1' }, { resource: 'aws.amazon.com/neuron', gpus: '16' })], flavors);
    expect(gangs[0]).toMatchObject({ flavors: ['trn1'], acceleratorsPerReplica: 16 });
  });

  it('does not import a gang whose pods ask for devices only through DRA ResourceClaims (binding them would skip the claims’ allocation)', () => {
    const dra = foreign('w0', { ...gang, 'quartermaster.io/gang-size': '1', 'quartermaster.io/flavor': 'h100-80gb' });
    dra.spec!.containers[0]!.resources = { requests: { cpu: '1' }, claims: [{ name: 'gpus' }] };
    dra.spec!.resourceClaims = [{ name: 'gpus', resourceClaimTemplateName: 'eight-h100' }];
    const { gangs, issues } = gangImportsFromPods([dra], flavors);
    expect(gangs).toEqual([]);
    expect(issues).toEqual([{ object: 'ml/bert-sweep', field: 'spec.resourceClaims', message: expect.stringContaining('only through DRA ResourceClaims') }]);
    // Claims next to an accelerator limit: counted as usual.
    const both = foreign('w1', { ...gang, 'quartermaster.io/gang-size': '1' });
    both.spec!.resourceClaims = [{ name: 'nic', resourceClaimTemplateName: 'rdma' }];
    expect(gangImportsFromPods([both], flavors).gangs).toHaveLength(1);
  });

  it('keeps gangs of the same name in different namespaces apart, sorted by key', () => {
    const one = { ...gang, 'quartermaster.io/gang-size': '1' };
    const { gangs } = gangImportsFromPods([foreign('a', one, { namespace: 'zeta' }), foreign('a', one, { namespace: 'alpha' })], flavors);
    expect(gangs.map((g) => g.key)).toEqual(['alpha/bert-sweep', 'zeta/bert-sweep']);
  });

  it('ignores pods without the gang annotation and Quartermaster\'s own pods', () => {
    const own: V1Pod = { ...foreign('own', gang), metadata: { name: 'own', namespace: 'ml', labels: { 'quartermaster.io/job-id': 'j1' }, annotations: gang } };
    expect(isGangImportCandidate(own)).toBe(false);
    expect(isGangImportCandidate(foreign('plain', {}))).toBe(false);
    expect(gangImportsFromPods([own, foreign('plain', {})], flavors)).toEqual({ gangs: [], issues: [] });
  });

  it('reports every bad annotation of a pod with its field', () => {
    const parsed = parseGangAnnotations(
      foreign('bad', { 'quartermaster.io/gang': 'Bad Name', 'quartermaster.io/gang-size': 'two', 'quartermaster.io/priority': '100', 'quartermaster.io/flavor': 'H100' }),
    );
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.issues.map((i) => i.field)).toEqual([
      'quartermaster.io/team',
      'quartermaster.io/gang',
      'quartermaster.io/gang-size',
      'quartermaster.io/flavor',
      'quartermaster.io/priority',
    ]);
    expect(parsed.issues[0]).toEqual({ object: 'ml/bad', field: 'quartermaster.io/team', message: 'is required' });
    expect(parsed.issues[4]!.message).toContain('use quartermaster.io/priority-class');
  });

  it('takes the priority class from the annotation, else the label, else the pods\' priorityClassName (ignored unless Quartermaster has that class)', () => {
    const one = { ...gang, 'quartermaster.io/gang-size': '1' };
    const labelled = foreign('w0', one);
    labelled.metadata!.labels = { 'quartermaster.io/priority-class': 'batch' };
    labelled.spec!.priorityClassName = 'system-cluster-critical';
    expect(gangImportsFromPods([labelled], flavors).gangs[0]!.priorityClass).toEqual({ name: 'batch', from: 'label' });
    labelled.metadata!.annotations = { ...one, 'quartermaster.io/priority-class': ' high ' };
    expect(gangImportsFromPods([labelled], flavors).gangs[0]!.priorityClass).toEqual({ name: 'high', from: 'label' });
    const plain = foreign('w1', one);
    plain.spec!.priorityClassName = 'high';
    expect(gangImportsFromPods([plain], flavors).gangs[0]!.priorityClass).toEqual({ name: 'high', from: 'pod' });
    expect(gangImportsFromPods([foreign('w2', one)], flavors).gangs[0]!.priorityClass).toBeNull();
  });

  it('refuses a numeric priority, as annotation or label, and a class name that cannot be one', () => {
    const numeric = foreign('w0', gang);
    numeric.metadata!.labels = { 'quartermaster.io/priority': '100' };
    expect(parseGangAnnotations(numeric)).toEqual({
      ok: false,
      issues: [{ object: 'ml/w0', field: 'quartermaster.io/priority', message: expect.stringMatching(/use quartermaster.io\/priority-class .*numbers are for admins over REST/) }],
    });
    expect(parseGangAnnotations(foreign('w1', { ...gang, 'quartermaster.io/priority-class': 'Very High' }))).toMatchObject({
      ok: false,
      issues: [{ field: 'quartermaster.io/priority-class', message: 'must name a priority class (a DNS label), got "Very High"' }],
    });
  });

  it.each([
    ['pods disagree on the priority class', [foreign('w0', gang), foreign('w1', { ...gang, 'quartermaster.io/priority-class': 'high' })], /disagree: none vs high/],
    ['pods disagree on the gang size', [foreign('w0', gang), foreign('w1', { ...gang, 'quartermaster.io/gang-size': '3' })], /disagree: 2 vs 3/],
    ['more pods than the gang size', [foreign('w0', gang), foreign('w1', gang), foreign('w2', gang)], /3 pods but declares gang-size 2/],
    ['an unknown flavor', [foreign('w0', { ...gang, 'quartermaster.io/flavor': 'v100' })], /unknown flavor "v100"/],
    ['no accelerator of a known flavor', [foreign('w0', gang, { resource: 'example.com/fpga' })], /requests no accelerator resource/],
    ['different accelerator counts', [foreign('w0', gang, { gpus: '4' }), foreign('w1', gang, { gpus: '8' })], /different accelerator counts/],
    ['a malformed quantity', [foreign('w0', gang, { gpus: 'lots' })], /invalid Kubernetes quantity "lots"/],
  ])('does not import a gang with %s, and says why', (_case, pods, message) => {
    const { gangs, issues } = gangImportsFromPods(pods, flavors);
    expect(gangs).toEqual([]);
    expect(issues.map((i) => i.message).join('\n')).toMatch(message);
  });
});

describe('lone accelerator pods (extender mode)', () => {
  const delegating = new Set(['default-scheduler']);

  it('are unbound pods of a delegating profile that ask for a known accelerator and name no gang or job', () => {
    expect(isLoneAcceleratorPod(foreign('infer-0', {}), flavors, delegating)).toBe(true);
    expect(isLoneAcceleratorPod(foreign('infer-0', {}, { nodeName: 'n1' }), flavors, delegating)).toBe(false);
    expect(isLoneAcceleratorPod(foreign('infer-0', {}, { resource: 'example.com/fpga' }), flavors, delegating)).toBe(false);
    expect(isLoneAcceleratorPod(foreign('infer-0', gang), flavors, delegating)).toBe(false);
    const ours = foreign('infer-0', {});
    ours.metadata!.labels = { 'quartermaster.io/job-id': 'j1' };
    expect(isLoneAcceleratorPod(ours, flavors, delegating)).toBe(false);
    const other = foreign('infer-0', {});
    other.spec!.schedulerName = 'volcano';
    expect(isLoneAcceleratorPod(other, flavors, delegating)).toBe(false);
  });

  it('are imported as one-pod gangs of the team they are charged to', () => {
    const pod = foreign('infer-0', {}, { gpus: '2' });
    const { gangs, issues } = gangImportsFromPods([asOnePodGang(pod, 'vision')], flavors);
    expect(issues).toEqual([]);
    expect(gangs).toEqual([expect.objectContaining({ key: 'ml/infer-0', team: 'vision', replicas: 1, acceleratorsPerReplica: 2, complete: true })]);
    expect(pod.metadata?.annotations).toEqual({}); // the pod itself is not changed
    const long = foreign(`x${'y'.repeat(80)}`, {});
    expect(onePodGangName(long)).toMatch(/^pod-[0-9a-f]{20}$/);
  });
});
