// What `kubectl describe pod` shows for pods that name Quartermaster's scheduler: a gang that cannot be
// imported (unknown team, bad annotation) says why on its pods and as an Event, and holds back no other
// gang; a waiting gang shows condition PodScheduled=False with its pending reason, queue position and
// expected start, with one Event per change of reason (and one log line, not one per pass); admission,
// binding and preemption are Events too.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { CoreV1Event, V1Pod, V1PodCondition } from '@kubernetes/client-node';
import { pino } from 'pino';
import { eventually, gangBody, seedTenancy, startQm, type QmEnv } from './scheduler-harness.js';

let qm: QmEnv;
const logs: { msg: string; subject?: string; reason?: string }[] = [];

beforeAll(async () => {
  const logger = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line) as (typeof logs)[number]) });
  qm = await startQm('qm-feedback', 4, {}, { logger });
  await seedTenancy(qm);
  await qm.ok('PUT', '/v1/teams/nlp/quotas/a100', { nominal: 8, borrowingLimit: 0, lendingLimit: null });
  await eventually('8 nodes synced', async () => {
    const nodes = ((await qm.ok('GET', '/v1/nodes')) as { items: { source: string }[] }).items;
    return nodes.filter((n) => n.source === 'kubernetes').length === 8 ? true : undefined;
  });
}, 180_000);

afterAll(async () => {
  await qm?.close();
}, 120_000);

const gangPod = (name: string, annotations: Record<string, string>, gpus = 4): V1Pod => ({
  metadata: { name, annotations: { 'quartermaster.io/flavor': 'a100', ...annotations } },
  spec: { schedulerName: 'quartermaster', containers: [{ name: 'c', image: 'x', resources: { limits: { 'nvidia.com/gpu': String(gpus) } } }] },
});
const create = (pod: V1Pod): Promise<V1Pod> => qm.core.createNamespacedPod({ namespace: qm.namespace, body: pod });
const gang = (team: string, name: string, size: number): Record<string, string> => ({
  'quartermaster.io/team': team,
  'quartermaster.io/gang': name,
  'quartermaster.io/gang-size': String(size),
});

async function scheduledCondition(pod: string): Promise<V1PodCondition | undefined> {
  return (await qm.cluster.getPod(pod, qm.namespace))?.status?.conditions?.find((c) => c.type === 'PodScheduled');
}
async function eventsOf(pod: string): Promise<CoreV1Event[]> {
  return (await qm.core.listNamespacedEvent({ namespace: qm.namespace, fieldSelector: `involvedObject.name=${pod}` })).items;
}
async function jobOf(pod: string): Promise<string | undefined> {
  return (await qm.cluster.getPod(pod, qm.namespace))?.metadata?.labels?.['quartermaster.io/job-id'];
}
async function bound(pods: string[]): Promise<true | undefined> {
  for (const name of pods) if (!(await qm.cluster.getPod(name, qm.namespace))?.spec?.nodeName) return undefined;
  return true;
}
/** Several import passes have run since the call: each of `n` fresh one-pod gangs was imported in turn. */
async function passesRan(prefix: string, n = 3): Promise<void> {
  for (let i = 0; i < n; i++) {
    await create(gangPod(`${prefix}-${i}`, gang('vision', `${prefix}-${i}`, 1), 1));
    await eventually(`gang ${prefix}-${i} imported`, () => jobOf(`${prefix}-${i}`));
  }
}

describe('feedback on pods that wait for Quartermaster', () => {
  it('a gang naming an unknown team gets its reason on its pods and as an Event; the gangs after it are imported and bound', async () => {
    await create(gangPod('bad-0', gang('ghost', 'bad', 1)));
    await create(gangPod('badsize-0', { ...gang('vision', 'badsize', 1), 'quartermaster.io/gang-size': 'two' }));
    await create(gangPod('good-0', gang('vision', 'good', 2)));
    await create(gangPod('good-1', gang('vision', 'good', 2)));

    await eventually('the valid gang imported and bound', async () => ((await jobOf('good-0')) ? bound(['good-0', 'good-1']) : undefined));
    const invalid = await eventually('bad-0 shows why', async () => ((await scheduledCondition('bad-0'))?.reason === 'InvalidGang' ? scheduledCondition('bad-0') : undefined));
    expect(invalid).toMatchObject({ status: 'False' });
    expect(invalid.message).toContain('unknown team "ghost"');
    expect(invalid.message).toContain('PUT /v1/teams/ghost');
    const badSize = await eventually('badsize-0 shows why', async () => ((await scheduledCondition('badsize-0'))?.reason === 'InvalidGang' ? scheduledCondition('badsize-0') : undefined));
    expect(badSize.message).toContain('quartermaster.io/gang-size: must be an integer');

    await passesRan('after-bad');
    const events = (await eventsOf('bad-0')).filter((e) => e.reason === 'InvalidGang');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'Warning', count: 1, source: { component: 'quartermaster' } });
    expect(events[0]!.message).toContain('unknown team "ghost"');
    expect(logs.filter((l) => l.msg === 'waiting pods: reason changed' && l.subject === `import:${qm.namespace}/bad`)).toHaveLength(1);

    // Skipped, not lost: once the team exists, the gang is imported and bound.
    await qm.ok('PUT', '/v1/teams/ghost', { cohort: 'research', namespaces: [qm.namespace] });
    await qm.ok('PUT', '/v1/teams/ghost/quotas/a100', { nominal: 8, borrowingLimit: 0, lendingLimit: null });
    await eventually('bad-0 imported and bound once its team exists', async () => ((await jobOf('bad-0')) ? bound(['bad-0']) : undefined));
  }, 120_000);

  it("a gang naming a team from a namespace not the team's is refused with the reason, charging nobody; imported once an admin adds the namespace", async () => {
    // Team outsider takes workloads from its own namespace only; someone in this namespace names it anyway.
    await qm.ok('PUT', '/v1/teams/outsider', { cohort: 'research' });
    await qm.ok('PUT', '/v1/teams/outsider/quotas/a100', { nominal: 8, borrowingLimit: 0, lendingLimit: null });
    await create(gangPod('foreign-0', gang('outsider', 'foreign', 1)));
    const refused = await eventually('foreign-0 shows why', async () => ((await scheduledCondition('foreign-0'))?.reason === 'InvalidGang' ? scheduledCondition('foreign-0') : undefined));
    expect(refused.message).toContain(`team outsider does not take workloads from namespace ${qm.namespace} (its namespaces: outsider)`);
    await passesRan('after-foreign');
    expect(await jobOf('foreign-0')).toBeUndefined();
    const jobs = (await qm.ok('GET', '/v1/jobs?team=outsider')) as { items: unknown[] };
    expect(jobs.items).toEqual([]);

    await qm.ok('PATCH', '/v1/teams/outsider', { namespaces: ['outsider', qm.namespace] });
    await eventually('foreign-0 imported and bound once its team takes this namespace', async () => ((await jobOf('foreign-0')) ? bound(['foreign-0']) : undefined));
  }, 120_000);

  it('a waiting gang shows PodScheduled=False with its pending reason, position and expected start; one Event and one log line per change', async () => {
    // nlp may hold 8 a100 and borrows nothing; a job of an hour holds them: 2 × 4 waits for it.
    const holder = ((await qm.ok('POST', '/v1/jobs', gangBody({ name: 'holder', team: 'nlp', replicas: 1, flavors: ['a100'], expectedRuntimeSeconds: 3600 }))) as { id: string }).id;
    await eventually('holder admitted', async () => ((await qm.jobPods(holder)).length === 1 ? true : undefined));
    await create(gangPod('wait-0', gang('nlp', 'wait', 2)));
    await create(gangPod('wait-1', gang('nlp', 'wait', 2)));
    const jobId = await eventually('gang imported', () => jobOf('wait-0'));
    const condition = await eventually('condition reported', async () => {
      const c = await scheduledCondition('wait-1');
      return c?.reason === "QuotaExceeded" ? c : undefined;
    });
    expect(condition.status).toBe('False');
    expect(condition.message).toMatch(/^QUOTA_EXCEEDED: team nlp uses 8 of 8 nominal a100/);
    expect(condition.message).toMatch(/; position \d+ in the queue; expected to start (\d{4}-\d\d-\d\d )?\d\d:\d\d UTC/);
    const job = (await qm.ok('GET', `/v1/jobs/${jobId}`)) as { pending: { code: string; message: string } };
    expect(condition.message).toContain(job.pending.message);

    await passesRan('after-wait');
    for (const pod of ['wait-0', 'wait-1']) {
      expect(await scheduledCondition(pod)).toMatchObject({ status: 'False', reason: 'QuotaExceeded' });
      const events = (await eventsOf(pod)).filter((e) => e.reason === 'QuotaExceeded');
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ type: 'Normal', count: 1 });
    }
    // Logged once per change of reason (maybe Queued before the first cycle, then QuotaExceeded), not once per pass.
    const logged = logs.filter((l) => l.msg === 'waiting pods: reason changed' && l.subject === `job:${jobId}`).map((l) => l.reason);
    expect(logged.filter((r) => r === 'QuotaExceeded')).toHaveLength(1);
    expect(logged.filter((r) => r !== 'QuotaExceeded' && r !== 'Queued')).toEqual([]);

    // The holder ends: the gang is admitted and bound; the pods say so.
    await qm.ok('DELETE', `/v1/jobs/${holder}`);
    await eventually('bound', () => bound(['wait-0', 'wait-1']));
    for (const pod of ['wait-0', 'wait-1']) {
      expect(await scheduledCondition(pod)).toMatchObject({ status: 'True' });
      const reasons = await eventually(`Admitted and Scheduled events on ${pod}`, async () => {
        const r = (await eventsOf(pod)).map((e) => e.reason);
        return r.includes('Admitted') && r.includes('Scheduled') ? r : undefined;
      });
      expect(reasons.filter((r) => r === 'Admitted')).toHaveLength(1);
    }
    expect((await eventsOf('wait-0')).find((e) => e.reason === 'Scheduled')!.message).toMatch(/^Successfully assigned .*\/wait-0 to /);
  }, 120_000);

  it('preemption and binding of REST jobs are Events on their pods', async () => {
    const low = ((await qm.ok('POST', '/v1/jobs', gangBody({ name: 'low', priority: 1, replicas: 4 }))) as { id: string }).id;
    const lowPods = await eventually('low bound', async () => {
      const pods = await qm.jobPods(low);
      return pods.length === 4 && pods.every((p) => p.spec?.nodeName) ? pods.map((p) => p.metadata!.name!) : undefined;
    });
    await qm.kubelet();
    await eventually('low running', async () => (((await qm.ok('GET', `/v1/jobs/${low}`)) as { state: string }).state === 'RUNNING' ? true : undefined));
    for (const pod of lowPods) {
      const scheduled = (await eventsOf(pod)).find((e) => e.reason === 'Scheduled');
      expect(scheduled?.message).toMatch(new RegExp(`^Successfully assigned ${qm.namespace}/${pod} to .* \\(admitted by Quartermaster: job low \\(${low}\\), 4 replica\\(s\\) × 8 h100`));
    }

    const high = ((await qm.ok('POST', '/v1/jobs', gangBody({ name: 'high', priority: 100, replicas: 4 }))) as { id: string }).id;
    await eventually('high bound', async () => {
      const pods = await qm.jobPods(high);
      return pods.length === 4 && pods.every((p) => p.spec?.nodeName) ? true : undefined;
    });
    for (const pod of lowPods) {
      const preempted = (await eventsOf(pod)).filter((e) => e.reason === 'Preempted');
      expect(preempted).toHaveLength(1);
      expect(preempted[0]!.type).toBe('Warning');
      expect(preempted[0]!.message).toContain('preempted by vision/high');
    }
  }, 120_000);
});
