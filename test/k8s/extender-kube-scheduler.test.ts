// The real kube-scheduler, configured with deploy/kube-scheduler/config.yaml (Quartermaster as extender,
// urlPrefix pointed at this test's scheduler process), schedules annotated gangs only where Quartermaster's quota and
// gang decisions allow: every pod lands on the node its replica was allocated, an unplaceable or
// over-quota gang gets no pod bound, and pods that are not Quartermaster's are scheduled as usual.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SchedulingV1Api, type V1Pod } from '@kubernetes/client-node';
import { testKubeConfig, uniqueName } from './support/cluster.js';
import { readRepoFile, startKubeScheduler, type RunningKubeScheduler } from './support/kube-scheduler.js';
import { eventually, seedTenancy, startQm, type QmEnv } from './scheduler-harness.js';
import { runKubelet } from './support/workloads.js';

let qm: QmEnv;
let kubeScheduler: RunningKubeScheduler;
const scheduling = testKubeConfig().makeApiClient(SchedulingV1Api);
const priorityClasses: string[] = [];

beforeAll(async () => {
  // Victims' pods terminate with a grace period, as on a real cluster (the window the extender must keep held).
  qm = await startQm('qm-ext', 4, { QM_KUBE_GRACE_SECONDS: '30' }, { extender: true });
  await seedTenancy(qm);
  await qm.ok('PUT', '/v1/teams/nlp/quotas/a100', { nominal: 8, borrowingLimit: 0, lendingLimit: null });
  await eventually('8 nodes synced', async () => {
    const nodes = ((await qm.ok('GET', '/v1/nodes')) as { items: { source: string }[] }).items;
    return nodes.filter((n) => n.source === 'kubernetes').length === 8 ? true : undefined;
  });
  kubeScheduler = await startKubeScheduler(readRepoFile('deploy/kube-scheduler/config.yaml'), (config) => {
    const [extender] = config.extenders as Record<string, unknown>[];
    extender!.urlPrefix = `${qm.schedulerUrl}/extender`;
  });
}, 180_000);

afterAll(async () => {
  for (const name of priorityClasses) await scheduling.deletePriorityClass({ name }).catch(() => undefined);
  await kubeScheduler?.stop();
  await qm?.close();
}, 120_000);

const gangPod = (name: string, team: string, gang: string, size: number, gpus: number): V1Pod => ({
  metadata: {
    name,
    annotations: { 'quartermaster.io/team': team, 'quartermaster.io/gang': gang, 'quartermaster.io/gang-size': String(size), 'quartermaster.io/flavor': 'a100' },
  },
  // No schedulerName: the default scheduler (kube-scheduler) schedules them, asking the extender.
  spec: { containers: [{ name: 'c', image: 'x', resources: { limits: { 'nvidia.com/gpu': String(gpus) } } }] },
});

type Job = { id: string; state: string; allocation?: { replica: number; node: string }[] };

describe('kube-scheduler with Quartermaster as extender', () => {
  it('binds a gang only to the nodes its replicas were allocated, and never part of a gang', async () => {
    const create = (pod: V1Pod): Promise<V1Pod> => qm.core.createNamespacedPod({ namespace: qm.namespace, body: pod });
    for (let i = 0; i < 3; i++) await create(gangPod(`ok-${i}`, 'vision', 'ok', 3, 8));
    // Over quota (nlp: 8 a100 nominal, no borrowing): 2 × 8 never admitted.
    for (let i = 0; i < 2; i++) await create(gangPod(`quota-${i}`, 'nlp', 'quota', 2, 8));

    const jobOf = async (prefix: string, n: number): Promise<string | undefined> => {
      const pods = (await qm.cluster.listPods({ namespace: qm.namespace })).filter((p) => p.metadata!.name!.startsWith(prefix));
      const id = pods[0]?.metadata?.labels?.['quartermaster.io/job-id'];
      return pods.length === n && id && pods.every((p) => p.metadata?.labels?.['quartermaster.io/job-id'] === id) ? id : undefined;
    };
    const okJob = await eventually('gang ok imported', () => jobOf('ok-', 3));
    const quotaJob = await eventually('gang quota imported', () => jobOf('quota-', 2));

    await eventually('kube-scheduler bound the admitted gang', async () => {
      const pods = await qm.jobPods(okJob);
      return pods.length === 3 && pods.every((p) => p.spec?.nodeName) ? true : undefined;
    }, 90_000);
    const job = (await qm.ok('GET', `/v1/jobs/${okJob}`)) as Job;
    for (const pod of await qm.jobPods(okJob)) {
      expect(pod.spec?.schedulerName).toBe('default-scheduler');
      const replica = Number(pod.metadata!.labels!['quartermaster.io/replica']);
      expect(pod.spec?.nodeName).toBe(job.allocation!.find((a) => a.replica === replica)!.node);
    }
    // kube-scheduler consulted the extender (its log carries the extender's rejections before admission);
    // Quartermaster's own worker never binds pods that name another scheduler.
    expect(kubeScheduler.logs()).toContain('Quartermaster: gang not imported yet');

    // Over quota: PENDING, and kube-scheduler bound none of its pods.
    const quota = (await qm.ok('GET', `/v1/jobs/${quotaJob}`)) as Job & { pending?: { code: string } };
    expect(quota.state).toBe('PENDING');
    // Never within nlp's quota (16 > 8 + 0): the core reports it unsatisfiable (or over quota).
    expect(quota.pending?.code).toMatch(/^(QUOTA_EXCEEDED|UNSATISFIABLE)$/);
    expect((await qm.jobPods(quotaJob)).filter((p) => p.spec?.nodeName)).toHaveLength(0);

    // Pods running: the job follows.
    await qm.kubelet();
    await eventually('gang running', async () => (((await qm.ok('GET', `/v1/jobs/${okJob}`)) as Job).state === 'RUNNING' ? true : undefined));
    expect((await qm.jobPods(quotaJob)).filter((p) => p.spec?.nodeName)).toHaveLength(0);
  }, 180_000);

  it('answers the extender verbs directly: filter rejects every node for a gang not admitted, bind refuses a wrong node', async () => {
    const pods = (await qm.cluster.listPods({ namespace: qm.namespace })).filter((p) => p.metadata!.name!.startsWith('quota-'));
    const nodes = qm.nodes.filter((n) => n.includes('-a100-'));
    const post = async (verb: string, body: unknown): Promise<Record<string, unknown>> => {
      const res = await fetch(`${qm.schedulerUrl}/extender/${verb}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(res.status).toBe(200);
      return (await res.json()) as Record<string, unknown>;
    };
    const filter = await post('filter', { Pod: pods[0], NodeNames: nodes });
    expect(filter.NodeNames).toEqual([]);
    // Unresolvable: kube-scheduler must not try to preempt its way past Quartermaster's decision.
    expect(filter.FailedNodes).toEqual({});
    expect(Object.keys(filter.FailedAndUnresolvableNodes as object).sort()).toEqual([...nodes].sort());
    expect(String(Object.values(filter.FailedAndUnresolvableNodes as object)[0])).toMatch(/not admitted/);
    const bind = await post('bind', { PodName: pods[0]!.metadata!.name, PodNamespace: qm.namespace, PodUID: pods[0]!.metadata!.uid, Node: nodes[0] });
    expect(String(bind.Error)).toMatch(/not admitted .*was not bound to/);
    const preempt = await post('preempt', { Pod: pods[0], NodeNameToMetaVictims: { [nodes[0]!]: { Pods: [{ UID: 'x' }], NumPDBViolations: 0 } } });
    expect(preempt.NodeNameToMetaVictims).toEqual({});
    const bad = await fetch(`${qm.schedulerUrl}/extender/filter`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[1]' });
    expect(bad.status).toBe(400);
  }, 60_000);

  it('binds only what kube-scheduler could have asked for, and answers nothing about a job to a pod outside its namespace', async () => {
    const post = async (verb: string, body: unknown): Promise<Record<string, unknown>> => {
      const res = await fetch(`${qm.schedulerUrl}/extender/${verb}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(res.status).toBe(200);
      return (await res.json()) as Record<string, unknown>;
    };
    const okJob = (await qm.cluster.getPod('ok-0', qm.namespace))!.metadata!.labels!['quartermaster.io/job-id']!;
    const gangPods = (await qm.jobPods(okJob)).filter((p) => p.metadata!.namespace === qm.namespace);
    const gangNodes = new Set(gangPods.map((p) => p.spec!.nodeName!));
    const freeA100 = qm.nodes.find((n) => n.includes('-a100-') && !gangNodes.has(n))!;
    const replica0 = gangPods.find((p) => p.metadata!.labels!['quartermaster.io/replica'] === '0')!;
    // Pods no kube-scheduler profile will place (a selector no node carries), each a way around the scheduler.
    const unplaceable = { 'qm-test/nowhere': 'true' };
    const podOf = (name: string, spec: Partial<V1Pod['spec']>, labels: Record<string, string> = {}): V1Pod => ({
      metadata: { name, labels },
      spec: { nodeSelector: unplaceable, containers: [{ name: 'c', image: 'x', resources: { limits: { 'nvidia.com/gpu': '8' } } }], ...spec },
    });
    const other = uniqueName('qm-ext-other');
    await qm.core.createNamespace({ body: { metadata: { name: other } } });
    try {
      const cases: { pod: V1Pod; namespace: string; node: string; refused: RegExp }[] = [
        // A pod of a scheduler nobody runs (as a kube-system pod would be), 8 GPUs onto the free a100 node.
        { pod: podOf('other-scheduler', { schedulerName: 'nobody' }), namespace: qm.namespace, node: freeA100, refused: /scheduled by nobody, not by a kube-scheduler profile that delegates to Quartermaster \(default-scheduler\)/ },
        // A CPU pod onto an accelerator node: kube-scheduler never asks the extender to bind it.
        { pod: podOf('cpu-only', { containers: [{ name: 'c', image: 'x' }] }), namespace: qm.namespace, node: freeA100, refused: /asks for no nvidia.com\/gpu/ },
        // kube-scheduler's own profile, 8 GPUs asked, room on the node — but its nodeSelector excludes that node.
        { pod: podOf('elsewhere-only', {}), namespace: qm.namespace, node: freeA100, refused: /the pod's nodeSelector qm-test\/nowhere=true does not match node .*was not bound/ },
        // Another namespace's pod wearing the labels of replica 0 of vision's running gang, onto that replica's node.
        {
          pod: podOf('forged', {}, { 'quartermaster.io/job-id': okJob, 'quartermaster.io/replica': '0' }),
          namespace: other,
          node: replica0.spec!.nodeName!,
          refused: new RegExp(`job ${okJob} is unknown in namespace ${other}`),
        },
      ];
      for (const c of cases) {
        const made = await qm.core.createNamespacedPod({ namespace: c.namespace, body: c.pod });
        const bind = await post('bind', { PodName: made.metadata!.name, PodNamespace: c.namespace, PodUID: made.metadata!.uid, Node: c.node });
        expect(String(bind.Error)).toMatch(c.refused);
        expect((await qm.cluster.getPod(made.metadata!.name!, c.namespace))?.spec?.nodeName).toBeUndefined();
      }
      // The forged pod learns nothing of the job through filter either: not its state, reason or node.
      const forged = (await qm.cluster.getPod('forged', other))!;
      const filter = await post('filter', { Pod: forged, NodeNames: [...gangNodes] });
      expect(filter.NodeNames).toEqual([]);
      const reasons = Object.values(filter.FailedAndUnresolvableNodes as Record<string, string>);
      expect(reasons).toHaveLength(gangNodes.size);
      for (const reason of reasons) {
        expect(reason).toBe(`Quartermaster: job ${okJob} is unknown in namespace ${other}`);
        expect(reason).not.toMatch(/RUNNING|allocated/);
      }
      const prioritize = (await (await fetch(`${qm.schedulerUrl}/extender/prioritize`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ Pod: forged, NodeNames: [...gangNodes] }),
      })).json()) as { Host: string; Score: number }[];
      expect(prioritize.every((p) => p.Score === 0)).toBe(true);
      // Its own pod still gets the answer, and the gang is untouched.
      const own = await post('filter', { Pod: replica0, NodeNames: [...gangNodes] });
      expect(own.NodeNames).toEqual([replica0.spec!.nodeName]);
      expect(((await qm.ok('GET', `/v1/jobs/${okJob}`)) as Job).state).toBe('RUNNING');

      // Placed by name (no scheduler asked) on the free a100 node, the copied labels do not pass its 8 GPUs off
      // as the gang's: the node sync counts them as others' use.
      const externalOf = async (node: string): Promise<number | undefined> =>
        ((await qm.ok('GET', '/v1/nodes')) as { items: { name: string; external: { accelerators: number } }[] }).items.find((n) => n.name === node)?.external.accelerators;
      await qm.core.createNamespacedPod({
        namespace: other,
        body: { ...podOf('placed-forged', { nodeName: freeA100, nodeSelector: undefined }, { 'quartermaster.io/job-id': okJob, 'quartermaster.io/replica': '1' }) },
      });
      await eventually('the placed pod counted as external', async () => ((await externalOf(freeA100)) === 8 ? true : undefined));
      await qm.core.deleteNamespacedPod({ name: 'placed-forged', namespace: other, gracePeriodSeconds: 0 });
      await eventually('the node free again', async () => ((await externalOf(freeA100)) === 0 ? true : undefined));
    } finally {
      await qm.core.deleteNamespacedPod({ name: 'placed-forged', namespace: other, gracePeriodSeconds: 0 }).catch(() => undefined);
      await qm.core.deleteNamespacedPod({ name: 'other-scheduler', namespace: qm.namespace, gracePeriodSeconds: 0 }).catch(() => undefined);
      await qm.core.deleteNamespacedPod({ name: 'cpu-only', namespace: qm.namespace, gracePeriodSeconds: 0 }).catch(() => undefined);
      await qm.core.deleteNamespacedPod({ name: 'elsewhere-only', namespace: qm.namespace, gracePeriodSeconds: 0 }).catch(() => undefined);
      await qm.core.deleteNamespacedPod({ name: 'forged', namespace: other, gracePeriodSeconds: 0 }).catch(() => undefined);
      await qm.core.deleteNamespace({ name: other }).catch(() => undefined);
    }
  }, 90_000);

  it("a job's labels copied onto a pod in another namespace neither fail nor end that job", async () => {
    const okJob = (await qm.cluster.getPod('ok-0', qm.namespace))!.metadata!.labels!['quartermaster.io/job-id']!;
    const replica0 = (await qm.jobPods(okJob)).find((p) => p.metadata!.namespace === qm.namespace && p.metadata!.labels!['quartermaster.io/replica'] === '0')!;
    const other = uniqueName('qm-ext-forge');
    await qm.core.createNamespace({ body: { metadata: { name: other } } });
    try {
      // Someone with pods in a namespace of their own: a pod labelled as replica 0 of vision's running gang, on
      // that replica's node, failed.
      await qm.core.createNamespacedPod({
        namespace: other,
        body: {
          metadata: {
            name: 'forged-0',
            labels: { 'quartermaster.io/job-id': okJob, 'quartermaster.io/replica': '0' },
            // … that also claims the gang's progress (the annotations an executor writes on its own pods).
            annotations: { 'quartermaster.io/last-checkpoint-at': new Date().toISOString(), 'quartermaster.io/completed-fraction': '0.99' },
          },
          spec: { nodeName: replica0.spec!.nodeName!, restartPolicy: 'Never', containers: [{ name: 'c', image: 'x' }] },
        },
      });
      await qm.cluster.patchPodStatus('forged-0', { phase: 'Failed' }, other);
      // A witness whose end the same pod watch reads after the forged failure: a one-pod gang of nlp, bound by
      // kube-scheduler, Running, then Succeeded.
      await qm.core.createNamespacedPod({ namespace: qm.namespace, body: gangPod('witness-0', 'nlp', 'witness', 1, 1) });
      const gangState = async (): Promise<string> => ((await qm.ok('GET', `/v1/jobs/${okJob}`)) as Job).state;
      const witness = await eventually('witness bound (or the gang ended)', async () => {
        if ((await gangState()) !== 'RUNNING') return null;
        const pod = await qm.cluster.getPod('witness-0', qm.namespace);
        return pod?.spec?.nodeName ? pod.metadata!.labels!['quartermaster.io/job-id'] : undefined;
      }, 90_000);
      expect(await gangState()).toBe('RUNNING');
      if (!witness) throw new Error('unreachable: the gang is RUNNING');
      await qm.cluster.patchPodStatus('witness-0', { phase: 'Running' }, qm.namespace);
      await eventually('witness running', async () => (((await qm.ok('GET', `/v1/jobs/${witness}`)) as Job).state === 'RUNNING' ? true : undefined));
      await qm.cluster.patchPodStatus('witness-0', { phase: 'Succeeded' }, qm.namespace);
      await eventually('witness succeeded', async () => (((await qm.ok('GET', `/v1/jobs/${witness}`)) as Job).state === 'SUCCEEDED' ? true : undefined));
      // Read after the forged pod's failure: vision's gang is still RUNNING, its pods untouched, its progress not the forger's.
      const after = (await qm.ok('GET', `/v1/jobs/${okJob}`)) as Job & { progress?: { completedFraction: number | null } | null };
      expect(after.state).toBe('RUNNING');
      expect(after.progress?.completedFraction ?? null).toBeNull();
      const own = (await qm.jobPods(okJob)).filter((pod) => pod.metadata!.namespace === qm.namespace);
      expect(own).toHaveLength(3);
      for (const pod of own) expect(pod.metadata?.deletionTimestamp).toBeUndefined();
    } finally {
      await qm.core.deleteNamespacedPod({ name: 'witness-0', namespace: qm.namespace, gracePeriodSeconds: 0 }).catch(() => undefined);
      await qm.core.deleteNamespacedPod({ name: 'forged-0', namespace: other, gracePeriodSeconds: 0 }).catch(() => undefined);
      await qm.core.deleteNamespace({ name: other }).catch(() => undefined);
    }
  }, 180_000);

  it('lets kube-scheduler preempt only pods that are not Quartermaster\'s (preempt verb)', async () => {
    // The a100 nodes: three hold the admitted gang "ok" (its pods have priority 0), the fourth is free.
    const priority = async (value: number): Promise<string> => {
      const name = uniqueName(`qm-ext-p${value}`);
      await scheduling.createPriorityClass({ body: { metadata: { name }, value, preemptionPolicy: 'PreemptLowerPriority' } });
      priorityClasses.push(name);
      return name;
    };
    const [middle, high] = [await priority(100), await priority(1000)];
    const plainPod = (name: string, priorityClassName: string): V1Pod => ({
      metadata: { name },
      spec: {
        priorityClassName,
        terminationGracePeriodSeconds: 0,
        nodeSelector: { 'nvidia.com/gpu.product': qm.a100Product },
        containers: [{ name: 'c', image: 'x', resources: { limits: { 'nvidia.com/gpu': '8' } } }],
      },
    });
    const boundNode = async (name: string): Promise<string | undefined> => (await qm.cluster.getPod(name, qm.namespace))?.spec?.nodeName || undefined;

    // A pod that is not Quartermaster's (priority 100) fills the free a100 node.
    await qm.core.createNamespacedPod({ namespace: qm.namespace, body: plainPod('filler', middle) });
    const fillerNode = await eventually('filler bound', () => boundNode('filler'), 60_000);
    const okJob = (await qm.cluster.getPod('ok-0', qm.namespace))!.metadata!.labels!['quartermaster.io/job-id']!;
    const gangPods = (await qm.jobPods(okJob)).map((p) => p.metadata!.name!);
    const gangNodes = new Set(await Promise.all(gangPods.map(async (name) => (await boundNode(name))!)));
    expect(gangNodes.has(fillerNode)).toBe(false);
    // Node sync: the filler's GPUs are other schedulers' usage (external); the gang's, bound by
    // kube-scheduler too, are Quartermaster's allocations and are not counted a second time.
    const externalOf = async (): Promise<Map<string, number>> =>
      new Map(((await qm.ok('GET', '/v1/nodes')) as { items: { name: string; external: { accelerators: number } }[] }).items.map((n) => [n.name, n.external.accelerators]));
    await eventually('filler counted as external', async () => ((await externalOf()).get(fillerNode) === 8 ? true : undefined));
    const external = await externalOf();
    for (const node of gangNodes) expect(external.get(node)).toBe(0);

    // A priority-1000 pod fits nowhere. kube-scheduler's own choice would be a node of the gang (its
    // victims, priority 0, are cheaper than the filler, 100); the preempt verb strikes every node whose
    // victims include a Quartermaster pod, so the filler is the one preempted.
    await qm.core.createNamespacedPod({ namespace: qm.namespace, body: plainPod('urgent', high) });
    await eventually('urgent bound after preempting the filler', async () => {
      const filler = await qm.cluster.getPod('filler', qm.namespace);
      if (filler?.metadata?.deletionTimestamp) await qm.core.deleteNamespacedPod({ name: 'filler', namespace: qm.namespace, gracePeriodSeconds: 0 }).catch(() => undefined);
      for (const name of gangPods) {
        if ((await qm.cluster.getPod(name, qm.namespace))?.metadata?.deletionTimestamp) throw new Error(`kube-scheduler preempted ${name}, a pod of gang ${okJob}`);
      }
      return boundNode('urgent');
    }, 90_000);
    expect(await boundNode('urgent')).toBe(fillerNode);
    expect(await qm.cluster.getPod('filler', qm.namespace)).toBeNull();

    // The gang is whole: every pod still bound where it was, none being deleted, the job RUNNING.
    for (const name of gangPods) {
      const pod = await qm.cluster.getPod(name, qm.namespace);
      expect(pod?.metadata?.deletionTimestamp).toBeUndefined();
      expect(gangNodes.has(pod!.spec!.nodeName!)).toBe(true);
    }
    expect(((await qm.ok('GET', `/v1/jobs/${okJob}`)) as Job).state).toBe('RUNNING');
    // kube-scheduler asked the preempt verb (the scheduler process counts extender calls by verb).
    const metrics = await (await fetch(`${qm.schedulerUrl}/metrics`)).text();
    expect(metrics).toMatch(/qm_extender_requests_total\{verb="preempt",outcome="ok"\} [1-9]/);
  }, 180_000);

  it('keeps pods that are not Quartermaster\'s off the nodes a preemption freed for its preemptor, while the victims terminate', async () => {
    await qm.ok('PUT', '/v1/teams/vision/quotas/h100', { nominal: 0, borrowingLimit: 32, lendingLimit: null });
    await qm.ok('PUT', '/v1/teams/nlp/quotas/h100', { nominal: 32, borrowingLimit: 0, lendingLimit: null });
    const h100 = qm.nodes.filter((n) => n.includes('-h100-'));
    const h100Pod = (name: string, annotations: Record<string, string>): V1Pod => ({
      metadata: { name, annotations },
      spec: {
        terminationGracePeriodSeconds: 30,
        nodeSelector: { 'nvidia.com/gpu.product': qm.h100Product },
        containers: [{ name: 'c', image: 'x', resources: { limits: { 'nvidia.com/gpu': '8' } } }],
      },
    });
    const gang = (team: string, gangName: string, size: number) => (i: number): V1Pod =>
      h100Pod(`${gangName}-${i}`, { 'quartermaster.io/team': team, 'quartermaster.io/gang': gangName, 'quartermaster.io/gang-size': String(size), 'quartermaster.io/flavor': 'h100' });
    const create = (pod: V1Pod): Promise<V1Pod> => qm.core.createNamespacedPod({ namespace: qm.namespace, body: pod });
    const jobOfPod = async (name: string): Promise<string | undefined> => (await qm.cluster.getPod(name, qm.namespace))?.metadata?.labels?.['quartermaster.io/job-id'];

    // vision borrows every h100 GPU: 4 × 8, bound by kube-scheduler and running.
    for (let i = 0; i < 4; i++) await create(gang('vision', 'borrower', 4)(i));
    const borrower = await eventually('borrower imported', () => jobOfPod('borrower-0'));
    await eventually('borrower bound', async () => ((await qm.jobPods(borrower)).filter((p) => p.spec?.nodeName).length === 4 ? true : undefined), 90_000);
    await qm.kubelet();
    await eventually('borrower running', async () => (((await qm.ok('GET', `/v1/jobs/${borrower}`)) as Job).state === 'RUNNING' ? true : undefined));

    // nlp, within its nominal quota, reclaims 16: the borrower is preempted and its pods terminate (no kubelet
    // here finishes them), while nlp's gang is admitted onto two of their nodes.
    for (let i = 0; i < 2; i++) await create(gang('nlp', 'reclaimer', 2)(i));
    const reclaimer = await eventually('reclaimer imported', () => jobOfPod('reclaimer-0'));
    const admitted = await eventually('reclaimer admitted onto the borrower’s nodes', async () => {
      const job = (await qm.ok('GET', `/v1/jobs/${reclaimer}`)) as Job;
      return job.allocation?.length === 2 ? job : undefined;
    }, 90_000);
    const held = new Set(admitted.allocation!.map((a) => a.node));
    await eventually('the borrower’s pods terminating', async () => {
      const pods = await qm.cluster.listPods({ namespace: qm.namespace });
      const victims = pods.filter((p) => p.metadata!.name!.startsWith('borrower-'));
      return victims.length === 4 && victims.every((p) => p.metadata?.deletionTimestamp) ? true : undefined;
    }, 60_000);

    // A GPU pod that is not Quartermaster's, as kube-scheduler asks about it: the reclaimer's nodes are not
    // free for it (kube-scheduler would see them free the moment the victims are gone); the other two are.
    const stray = h100Pod('stray', {});
    const res = await fetch(`${qm.schedulerUrl}/extender/filter`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ Pod: stray, NodeNames: h100 }),
    });
    const filter = (await res.json()) as { NodeNames: string[]; FailedAndUnresolvableNodes: Record<string, string> };
    expect(filter.NodeNames.sort()).toEqual(h100.filter((n) => !held.has(n)).sort());
    expect(Object.keys(filter.FailedAndUnresolvableNodes).sort()).toEqual([...held].sort());
    for (const reason of Object.values(filter.FailedAndUnresolvableNodes)) expect(reason).toMatch(/8 of this node's 8 nvidia.com\/gpu are allocated to admitted gangs; the pod asks 8/);

    // For real: the stray pod is created while the victims terminate, then they go. The reclaimer runs on its
    // nodes, and the stray pod lands on one of the others.
    await create(stray);
    const kubelet = runKubelet(qm);
    try {
      await eventually('reclaimer running', async () => (((await qm.ok('GET', `/v1/jobs/${reclaimer}`)) as Job).state === 'RUNNING' ? true : undefined), 90_000);
      for (const pod of await qm.jobPods(reclaimer)) expect(held.has(pod.spec!.nodeName!)).toBe(true);
      const strayNode = await eventually('stray bound', async () => (await qm.cluster.getPod('stray', qm.namespace))?.spec?.nodeName || undefined, 90_000);
      expect(held.has(strayNode)).toBe(false);
    } finally {
      await kubelet.stop();
    }
  }, 300_000);
});

