import { createHash } from 'node:crypto';
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { NewJob } from '#db';
import { LABEL_JOB_ID, LABEL_REPLICA, type GangImport, type KubeCluster, type KubeFlavor } from '#kube';
import type { KubeJobStore } from './kube-job-store.js';

/**
 * Imports gangs of foreign pods annotated for Quartermaster (quartermaster.io/team, /gang, /gang-size,
 * optional /flavor, /priority; see libs/kube gang-import) as jobs: once every pod of a gang exists and
 * none is bound, the gang is submitted (Idempotency-Key `kube-import:<ns>/<gang>:<uids>`, so a crash
 * between submission and labelling imports it once) and its pods are labelled with the job id and a
 * replica index. From then on they are that job's pods: the scheduler admits the gang whole and the bind
 * handler binds these pods (none before all are placeable). Pods must name Quartermaster's scheduler.
 */
export class GangImporter {
  private timer: NodeJS.Timeout | null = null;
  private chain: Promise<void> = Promise.resolve();
  private readonly core: CoreV1Api;

  constructor(
    private readonly cluster: KubeCluster,
    private readonly store: KubeJobStore,
    private readonly everyMs: number,
    private readonly onImported: () => void,
    private readonly logger: Logger,
  ) {
    this.core = cluster.kubeConfig.makeApiClient(CoreV1Api);
  }

  start(): void {
    if (this.everyMs <= 0) return;
    this.timer = setInterval(() => {
      this.chain = this.chain.then(() => this.runOnce().then(() => undefined, (error: unknown) => this.logger.warn({ err: error }, 'gang import failed')));
    }, this.everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.chain;
  }

  /** One pass: imports every complete, unbound gang. Returns the job ids created or found. */
  async runOnce(): Promise<string[]> {
    const flavors: KubeFlavor[] = await this.store.kubeFlavors();
    const { gangs, issues } = await this.cluster.listGangImports(flavors);
    for (const issue of issues) this.logger.warn(issue, 'gang import: pod not importable');
    const ids: string[] = [];
    for (const gang of gangs) {
      if (!gang.complete || gang.pods.some((pod) => pod.nodeName)) continue;
      ids.push(await this.importGang(gang));
    }
    if (ids.length > 0) this.onImported();
    return ids;
  }

  private async importGang(gang: GangImport): Promise<string> {
    const job: NewJob = {
      name: gang.name,
      team: gang.team,
      kind: gang.kind,
      priority: gang.priority,
      preemptible: gang.preemptible,
      replicas: gang.replicas,
      minReplicas: gang.minReplicas,
      acceleratorsPerReplica: gang.acceleratorsPerReplica,
      cpuMillisPerReplica: gang.template.cpuMillis ?? 0,
      memoryMiBPerReplica: gang.template.memoryMiB ?? 0,
      flavors: gang.flavors,
      flavorSelection: 'preference',
      speeds: null,
      topologyLevel: 'none',
      tpuShape: null,
      expectedRuntimeSeconds: null,
      template: { ...gang.template, importedFrom: { namespace: gang.namespace, gang: gang.name } },
    };
    const key = `kube-import:${gang.key}:${createHash('sha256').update(gang.pods.map((p) => p.uid ?? p.name).join(',')).digest('hex').slice(0, 16)}`;
    const requestHash = createHash('sha256').update(JSON.stringify(job)).digest('hex');
    const result = await this.store.submitter().submit(job, 'kubernetes', { key, requestHash });
    if (result.kind !== 'created' && result.kind !== 'replayed') {
      throw new Error(`gang ${gang.key} cannot be imported: ${JSON.stringify(result)}`);
    }
    const jobId = result.job.id;
    await Promise.all(
      gang.pods.map((pod, replica) =>
        this.core.patchNamespacedPod(
            { name: pod.name, namespace: pod.namespace, body: { metadata: { labels: { [LABEL_JOB_ID]: jobId, [LABEL_REPLICA]: String(replica) } } } },
            setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
          ),
      ),
    );
    this.logger.info({ gang: gang.key, jobId, replicas: gang.replicas }, 'gang imported as a job');
    return jobId;
  }
}
