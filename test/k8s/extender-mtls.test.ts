// The extender with mutual TLS (issue #27): with QM_EXTENDER_TLS_* set it has a listener of its own that
// completes a handshake only with a client certificate its CA signed. Without one, or with a certificate of
// another CA, nothing is answered; the scheduler's plain port no longer serves the verbs at all; and a real
// kube-scheduler, given the client certificate in its extender tlsConfig (enableHTTPS), still binds a gang
// through it.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { V1Pod } from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { TestCerts } from '../support/test-certs.js';
import { readRepoFile, startKubeScheduler, type RunningKubeScheduler } from './support/kube-scheduler.js';
import { eventually, seedTenancy, startQm, type QmEnv } from './scheduler-harness.js';

const certs = new TestCerts();
const file = (name: string): string => certs.file(name);

let qm: QmEnv;
let kubeScheduler: RunningKubeScheduler | undefined;

beforeAll(async () => {
  certs.ca('extender-ca');
  certs.cert('extender', 'extender-ca', 'serverAuth', 'IP:127.0.0.1,DNS:localhost');
  certs.cert('kube-scheduler', 'extender-ca', 'clientAuth');
  certs.ca('other-ca');
  certs.cert('intruder', 'other-ca', 'clientAuth');
  qm = await startQm('qm-mtls', 2, {
    QM_EXTENDER_TLS_CERT_FILE: file('extender.crt'),
    QM_EXTENDER_TLS_KEY_FILE: file('extender.key'),
    QM_EXTENDER_TLS_CLIENT_CA_FILE: file('extender-ca.crt'),
    QM_EXTENDER_TLS_PORT: '0',
  }, { extender: true });
  await seedTenancy(qm);
  await eventually('4 nodes synced', async () => {
    const nodes = ((await qm.ok('GET', '/v1/nodes')) as { items: { source: string }[] }).items;
    return nodes.filter((n) => n.source === 'kubernetes').length === 4 ? true : undefined;
  });
}, 180_000);

afterAll(async () => {
  await kubeScheduler?.stop();
  await qm?.close();
  certs.remove();
}, 120_000);

/** POST /extender/filter over TLS with the given client certificate (or none); the status, or the error. */
function post(client: string | null, body: unknown): Promise<{ status: number; body: unknown } | { error: string }> {
  const url = new URL(`${qm.extenderTlsUrl}/extender/filter`);
  return new Promise((resolve) => {
    const req = httpsRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        ca: readFileSync(file('extender-ca.crt')),
        ...(client ? { cert: readFileSync(file(`${client}.crt`)), key: readFileSync(file(`${client}.key`)) } : {}),
        agent: false,
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? (JSON.parse(text) as unknown) : null }));
        res.on('error', (error) => resolve({ error: error.message }));
      },
    );
    req.on('error', (error) => resolve({ error: error.message }));
    req.end(JSON.stringify(body));
  });
}

const gangPod = (name: string, size: number): V1Pod => ({
  metadata: { name, annotations: { 'quartermaster.io/team': 'vision', 'quartermaster.io/gang': 'tls', 'quartermaster.io/gang-size': String(size), 'quartermaster.io/flavor': 'a100' } },
  spec: { containers: [{ name: 'c', image: 'x', resources: { limits: { 'nvidia.com/gpu': '8' } } }] },
});

describe('the scheduler extender with mutual TLS', () => {
  it('answers only a client whose certificate its CA signed; the plain port no longer serves the verbs', async () => {
    expect(qm.extenderTlsUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const args = { Pod: { metadata: { name: 'p', namespace: qm.namespace } }, NodeNames: [qm.nodes[0]] };
    const signed = await post('kube-scheduler', args);
    expect(signed).toMatchObject({ status: 200, body: { NodeNames: [qm.nodes[0]] } });
    // No certificate, or one of another CA: the handshake fails, nothing is answered.
    for (const client of [null, 'intruder']) {
      const refused = await post(client, args);
      expect(refused).toHaveProperty('error');
      expect(refused).not.toHaveProperty('status');
    }
    // The plain port: no extender there any more (its health and metrics stay).
    const plain = await fetch(`${qm.schedulerUrl}/extender/filter`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(args) });
    expect(plain.status).toBe(404);
    expect((await fetch(`${qm.schedulerUrl}/healthz`)).status).toBe(200);
    // Bad bodies over TLS are answered as on the plain port.
    expect(await post('kube-scheduler', [1])).toMatchObject({ status: 400 });
  }, 60_000);

  it("kube-scheduler with the client certificate in its extender tlsConfig binds a gang where Quartermaster allocated it", async () => {
    kubeScheduler = await startKubeScheduler(readRepoFile('deploy/kube-scheduler/config.yaml'), (config) => {
      const [extender] = config.extenders as Record<string, unknown>[];
      extender!.urlPrefix = `${qm.extenderTlsUrl}/extender`;
      extender!.enableHTTPS = true;
      extender!.tlsConfig = { certFile: file('kube-scheduler.crt'), keyFile: file('kube-scheduler.key'), caFile: file('extender-ca.crt') };
    });
    for (let i = 0; i < 2; i++) await qm.core.createNamespacedPod({ namespace: qm.namespace, body: gangPod(`tls-${i}`, 2) });
    const jobId = await eventually('gang imported', async () => {
      const pods = (await qm.cluster.listPods({ namespace: qm.namespace })).filter((p) => p.metadata!.name!.startsWith('tls-'));
      const id = pods[0]?.metadata?.labels?.['quartermaster.io/job-id'];
      return pods.length === 2 && id && pods.every((p) => p.metadata?.labels?.['quartermaster.io/job-id'] === id) ? id : undefined;
    });
    await eventually('kube-scheduler bound the gang through the TLS extender', async () => {
      const pods = await qm.jobPods(jobId);
      return pods.length === 2 && pods.every((p) => p.spec?.nodeName) ? true : undefined;
    }, 90_000);
    const job = (await qm.ok('GET', `/v1/jobs/${jobId}`)) as { allocation: { replica: number; node: string }[] };
    for (const pod of await qm.jobPods(jobId)) {
      const replica = Number(pod.metadata!.labels!['quartermaster.io/replica']);
      expect(pod.spec?.nodeName).toBe(job.allocation.find((a) => a.replica === replica)!.node);
    }
  }, 180_000);
});
