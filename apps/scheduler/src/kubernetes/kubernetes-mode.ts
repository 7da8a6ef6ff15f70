import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { Config } from '#common';
import { Database } from '#db';
import { KubeCluster, KubeLeaseStore, LABEL_JOB_ID, isTerminalPod, podRequests, schedulerNameOf } from '#kube';
import { CycleTriggerPublisher, GatedLeaseStore, type AnySideEffectHandler, type CycleTriggerReason, type LeaseStore } from '#scheduling';
import { ExtenderService } from '../extender/extender-service.js';
import { registerExtenderRoutes, type RouteHost } from '../extender/extender-routes.js';
import { extenderTlsSettingsFromEnv, startExtenderTlsServer, type ExtenderTlsServer } from '../extender/extender-tls-server.js';
import { ClusterNamespacesSync, assertOwnNamespaceIsNoJobsNamespace } from './cluster-namespaces-sync.js';
import { GangImporter } from './gang-importer.js';
import { KubeJobStore } from './kube-job-store.js';
import { lonePodCharge } from './lone-pods.js';
import { kubernetesSettingsFromEnv, type KubernetesSettings } from './kubernetes-settings.js';
import { releaseJobsOnDepartedNodes } from './departed-nodes.js';
import { NodeStoreSync, type HeldByOwnPods } from './node-store-sync.js';
import { PodFeedback, podReporting } from './pod-feedback.js';
import { PodPhaseSync } from './pod-phase-sync.js';
import { kubernetesSideEffectHandlers } from './pod-side-effects.js';
import { WorkloadImporter, unimportedWorkloadPodCheck } from './workload-importer.js';
import { UnboundPods } from './unbound-pods.js';
import { WorkloadStatusSync } from './workload-status-sync.js';
import { WorkloadViews } from './workload-views.js';
import { startInOrder } from './start-in-order.js';

function clusterFor(config: Config, settings: KubernetesSettings): KubeCluster {
  if (!config.kubeconfig) throw new Error('Kubernetes mode needs KUBECONFIG');
  return KubeCluster.fromKubeconfig(config.kubeconfig, { namespace: settings.namespace, schedulerName: settings.schedulerName });
}

/** The `kubernetesHandlers` factory of startRole: bind/evict/delete through the Kubernetes API. */
export function kubernetesHandlers(env: Record<string, string | undefined> = process.env) {
  return (config: Config, database: Database, logger: Logger): AnySideEffectHandler[] => {
    const settings = kubernetesSettingsFromEnv(env);
    return kubernetesSideEffectHandlers(clusterFor(config, settings), new KubeJobStore(database), settings, logger.child({ component: 'kube-side-effects' }));
  };
}

/**
 * startRole's `leases` in Kubernetes mode with QM_KUBE_LEADER_LEASE: the leader must hold that
 * coordination.k8s.io Lease as well as the Postgres lease (whose token still fences every commit).
 * Undefined when the setting is unset.
 */
export function kubernetesLeaderLease(config: Config, env: Record<string, string | undefined> = process.env): ((postgres: LeaseStore) => LeaseStore) | undefined {
  const settings = kubernetesSettingsFromEnv(env);
  const name = settings.leaderLease;
  if (name === null) return undefined;
  const gate = new KubeLeaseStore(clusterFor(config, settings), settings.leaderLeaseNamespace);
  return (postgres) => new GatedLeaseStore(gate, postgres, () => name);
}

export interface KubernetesWatchers {
  nodes: NodeStoreSync;
  pods: PodPhaseSync;
  importer: GangImporter;
  /** Gangs from Jobs, JobSets, TrainJobs, RayClusters/RayJobs, LeaderWorkerSets, and their ends. */
  workloads: WorkloadImporter;
  workloadStatus: WorkloadStatusSync;
  /** The workload watches the importer and the status sync share (and the extender's filter reads). */
  workloadViews: WorkloadViews;
  stop(): Promise<void>;
}

/**
 * The cluster → Postgres half of Kubernetes mode: node sync (nodes rows, source `kubernetes`), pod phases
 * → job states, and the import of annotated foreign gangs; each change publishes a cycle trigger. Safe
 * to run in several processes (every write is idempotent and checked against the current state).
 */
export async function startKubernetesWatchers(config: Config, database: Database, redisPrefix: string, logger: Logger, env: Record<string, string | undefined> = process.env): Promise<KubernetesWatchers> {
  const settings = kubernetesSettingsFromEnv(env);
  const cluster = clusterFor(config, settings);
  const store = new KubeJobStore(database);
  const log = logger.child({ component: 'kube-watchers' });
  const publisher = new CycleTriggerPublisher(config.redisUrl, redisPrefix, log);
  const trigger = (reason: CycleTriggerReason) => (): void => void publisher.publish(reason);
  const namespaces = new ClusterNamespacesSync(cluster, database, settings, log);
  const pods = new PodPhaseSync(cluster, store, settings.replicaFailure, log, trigger('job.finished'));
  // Our pods that another scheduler bound, by node: indexed once per node-sync write, not per node. Only pods in
  // their job's namespace: a job's labels copied onto a pod elsewhere must not make that pod's use look like ours.
  const heldByOwnPods = async (): Promise<HeldByOwnPods> => {
    const bound = pods
      .pods()
      .filter((pod) => pod.spec?.nodeName && !isTerminalPod(pod) && !pod.metadata?.deletionTimestamp && schedulerNameOf(pod) !== settings.schedulerName);
    const homes = bound.length === 0 ? new Map<string, string | null>() : await store.podNamespaces(bound.map((pod) => pod.metadata?.labels?.[LABEL_JOB_ID] ?? ''));
    const byNode = new Map<string, V1Pod[]>();
    for (const pod of bound) {
      const node = pod.spec!.nodeName!;
      // Terminating ones stay external (above): their job may have released its allocation already.
      const jobId = pod.metadata?.labels?.[LABEL_JOB_ID] ?? '';
      if (!homes.has(jobId) || (homes.get(jobId) ?? settings.namespace) !== pod.metadata?.namespace) continue;
      const list = byNode.get(node);
      if (list) list.push(pod);
      else byNode.set(node, [pod]);
    }
    return (node, resourceName) => heldOnNode(byNode.get(node) ?? [], resourceName);
  };
  const heldOnNode = (onNode: readonly V1Pod[], resourceName: string): { accelerators: number; cpuMillis: number; memoryMiB: number } => {
    const held = { accelerators: 0, cpuMillis: 0, memoryMiB: 0 };
    for (const pod of onNode) {
      let r: { accelerators: number; cpuMillis: number; memoryMiB: number };
      try {
        r = podRequests(pod, resourceName || null);
      } catch {
        continue; // malformed quantities: ClusterNodeSync could not count it either
      }
      held.accelerators += r.accelerators;
      held.cpuMillis += r.cpuMillis;
      held.memoryMiB += r.memoryMiB;
    }
    return held;
  };
  const nodes = new NodeStoreSync(
    cluster,
    database,
    () => store.kubeFlavors(),
    {
      debounceMs: settings.nodeSyncDebounceMs,
      flavorRefreshMs: settings.flavorRefreshMs,
      onChanged: trigger('node.changed'),
      heldByOwnPods,
      releaseDeparted: releaseJobsOnDepartedNodes(store, log),
    },
    log,
  );
  const feedback = new PodFeedback(podReporting(cluster, log).reporter, log);
  // One watch of the unbound pods for both importers (each listed them every pass).
  const unbound = new UnboundPods(cluster, log);
  // One watch per workload kind in use, for the importers (owner chains) and the status sync (ends).
  const workloadViews = new WorkloadViews(cluster, log);
  // Lone accelerator pods of kube-scheduler's delegating profiles: one-pod gangs of their namespace's team (opt-in).
  const lonePods =
    settings.unlabelledAcceleratorPods === 'charge'
      ? { delegating: new Set(settings.extenderSchedulerNames), isWorkloadPod: unimportedWorkloadPodCheck(cluster, workloadViews) }
      : null;
  const importer = new GangImporter(cluster, store, settings.importEveryMs, trigger('job.submitted'), log, feedback, undefined, unbound.source(), lonePods);
  const workloads = new WorkloadImporter(cluster, store, settings.importEveryMs, trigger('job.submitted'), log, new PodFeedback(podReporting(cluster, log).reporter, log), undefined, unbound.source(), workloadViews);
  // A new pod that may be ours is imported (or bound to its gang's free replica) at once, not at the next tick.
  unbound.onAdded(() => {
    importer.nudge();
    workloads.nudge();
  });
  const workloadStatus = new WorkloadStatusSync(cluster, database, store, settings.importEveryMs, trigger('job.finished'), log, workloadViews);
  // Started in this order; a failure stops what started before it (in reverse) and fails the start-up.
  await startInOrder(
    [
      { start: () => undefined, stop: () => publisher.close() },
      { start: () => assertOwnNamespaceIsNoJobsNamespace(database, settings, log), stop: () => undefined },
      namespaces,
      pods,
      nodes,
      { start: () => (settings.importEveryMs > 0 ? unbound.start() : undefined), stop: () => unbound.stop() },
      importer,
      workloads,
      workloadStatus,
    ],
    (error) => log.warn({ err: error }, 'kube watchers: a component failed to stop after a failed start-up'),
  );
  return {
    nodes,
    pods,
    importer,
    workloads,
    workloadStatus,
    workloadViews,
    async stop() {
      await workloadStatus.stop();
      await workloads.stop();
      await workloadViews.stop();
      await importer.stop();
      await unbound.stop();
      await pods.stop();
      await nodes.stop();
      await namespaces.stop();
      await publisher.close();
    },
  };
}

/** Kubernetes mode of a scheduler process: the watchers, and the extender routes for its HTTP server. */
export interface KubernetesMode extends KubernetesWatchers {
  /**
   * Registers POST /extender/* on a process's HTTP server (startRole's `routes`) — unless the extender has its
   * own mutual-TLS listener (QM_EXTENDER_TLS_*): then the plain port does not serve it at all.
   */
  routes(host: RouteHost): void;
  /** The extender's mutual-TLS listener when configured, else null. */
  extenderTls: { url: string } | null;
}

/**
 * Starts the watchers of Kubernetes mode over `database` (already migrated) and returns them with the
 * scheduler-extender routes, which `start:scheduler` and `npm start` mount on the scheduler's HTTP
 * server (QM_SCHEDULER_PORT, 8081): every scheduler replica, leader or standby, can answer
 * kube-scheduler, since the answers come from Postgres and this process's pod watch.
 */
export async function startKubernetesMode(config: Config, database: Database, redisPrefix: string, logger: Logger, env: Record<string, string | undefined> = process.env): Promise<KubernetesMode> {
  const tls = extenderTlsSettingsFromEnv(env);
  const watchers = await startKubernetesWatchers(config, database, redisPrefix, logger, env);
  const attach = (host: RouteHost): void => {
    attachExtender(host, config, database, () => watchers.pods.pods(), logger, env, watchers.workloadViews);
  };
  let server: ExtenderTlsServer | null = null;
  if (tls) {
    server = await startExtenderTlsServer(tls, config.host, config.httpTimeouts, attach, logger.child({ component: 'extender' })).catch(async (error: unknown) => {
      await watchers.stop();
      throw error;
    });
  } else {
    logger.warn('extender: served on the scheduler port without client authentication; set QM_EXTENDER_TLS_CERT_FILE, _KEY_FILE and _CLIENT_CA_FILE for mutual TLS');
  }
  return {
    ...watchers,
    routes(host) {
      if (!tls) attach(host);
    },
    extenderTls: server ? { url: server.url } : null,
    async stop() {
      await server?.close();
      await watchers.stop();
    },
  };
}

/**
 * Serves the scheduler extender (POST /extender/filter|prioritize|bind|preempt) on an HTTP host — the
 * scheduler process's Fastify instance — answering from Postgres and the watchers' pod cache.
 */
export function attachExtender(
  host: RouteHost,
  config: Config,
  database: Database,
  ownPods: () => readonly V1Pod[],
  logger: Logger,
  env: Record<string, string | undefined> = process.env,
  views: WorkloadViews | null = null,
): ExtenderService {
  const settings = kubernetesSettingsFromEnv(env);
  const cluster = clusterFor(config, settings);
  const delegatingSchedulers = new Set(settings.extenderSchedulerNames);
  const service = new ExtenderService(database, cluster, ownPods, unimportedWorkloadPodCheck(cluster, views), {
    namespace: settings.namespace,
    delegatingSchedulers,
    ...(settings.unlabelledAcceleratorPods === 'charge' ? { lonePods: lonePodCharge(new KubeJobStore(database), delegatingSchedulers) } : {}),
  });
  registerExtenderRoutes(host, service, logger.child({ component: 'extender' }));
  return service;
}
