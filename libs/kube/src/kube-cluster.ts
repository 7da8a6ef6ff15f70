import {
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  ListWatch,
  PatchStrategy,
  Watch,
  setHeaderOptions,
  type KubernetesListObject,
  type KubernetesObject,
  type V1Lease,
  type V1Namespace,
  type V1Node,
  type V1Pod,
  type V1PodStatus,
} from '@kubernetes/client-node';
import type { ClusterNode } from '#core';
import {
  EvictionBlockedError,
  KubeApiError,
  PodBoundElsewhereError,
  PodConflictError,
  PodNotFoundError,
  PodTerminatingError,
  apiStatusOf,
} from './errors.js';
import { gangImportsFromPods, type GangImport, type ImportIssue } from './gang-import.js';
import { DEFAULT_SCHEDULER_NAME, LABEL_JOB_ID } from './labels.js';
import {
  decideLease,
  leaseRecordOf,
  leaseStateOf,
  nextLeaseSpec,
  type LeaseState,
} from './lease.js';
import { nodeFromKube, type KubeFlavor } from './node-mapping.js';
import { keepAliveKubeConfig } from './keep-alive-kubeconfig.js';
import { WORKLOAD_KINDS } from './workloads/workload-kinds.js';
import type { KubeObject, WorkloadKind } from './workloads/workload.js';

export interface KubeClusterOptions {
  /** Namespace of Quartermaster's pods and of its Lease, unless a call names another. Default `default`. */
  namespace?: string;
  /** Pods naming this scheduler are Quartermaster's. Default `quartermaster`. */
  schedulerName?: string;
  /** Recorded as the field manager of writes. Default `quartermaster`. */
  fieldManager?: string;
}

export interface PodQuery {
  /** Default: the cluster's namespace. */
  namespace?: string;
  /** List across every namespace (overrides `namespace`). */
  allNamespaces?: boolean;
  labelSelector?: string;
  fieldSelector?: string;
}

export interface ResourceHandlers<T> {
  onAdd?: (object: T) => void;
  onUpdate?: (object: T) => void;
  onDelete?: (object: T) => void;
  /** A watch failed; it is restarted after a backoff (1 s doubling to 30 s) until stopped. */
  onError?: (error: KubeApiError) => void;
}

/** A running list+watch with its local cache. */
export interface ResourceWatch<T> {
  /** Current cached objects. */
  list(): readonly T[];
  get(name: string, namespace?: string): T | undefined;
  stop(): Promise<void>;
}

export type BindResult = 'bound' | 'already-bound';
export type RemoveResult = 'evicted' | 'deleted' | 'not-found';

const PAGE = 500;

/**
 * The one place that talks to the Kubernetes API. Every write is idempotent in the way the scheduler's
 * retried side effects need: creating an existing pod of the same job, binding a pod already bound to
 * the same node, evicting or deleting a pod that is gone all succeed; real conflicts raise typed errors.
 */
export class KubeCluster {
  readonly namespace: string;
  readonly schedulerName: string;
  private readonly fieldManager: string;
  private readonly core: CoreV1Api;
  private readonly coordination: CoordinationV1Api;
  private readonly custom: CustomObjectsApi;

  constructor(
    readonly kubeConfig: KubeConfig,
    options: KubeClusterOptions = {},
  ) {
    this.namespace = options.namespace ?? 'default';
    this.schedulerName = options.schedulerName ?? DEFAULT_SCHEDULER_NAME;
    this.fieldManager = options.fieldManager ?? 'quartermaster';
    this.core = kubeConfig.makeApiClient(CoreV1Api);
    this.coordination = kubeConfig.makeApiClient(CoordinationV1Api);
    this.custom = kubeConfig.makeApiClient(CustomObjectsApi);
  }

  /**
   * From a kubeconfig file, or (no path) the usual places: $KUBECONFIG, ~/.kube/config, in-cluster;
   * API calls reuse keep-alive connections (keepAliveKubeConfig).
   */
  static fromKubeconfig(path?: string, options: KubeClusterOptions = {}): KubeCluster {
    const kc = new KubeConfig();
    if (path) kc.loadFromFile(path);
    else kc.loadFromDefault();
    return new KubeCluster(keepAliveKubeConfig(kc), options);
  }

  // ---------------------------------------------------------------------------------------------
  // Nodes
  // ---------------------------------------------------------------------------------------------

  async listNodes(options: { labelSelector?: string } = {}): Promise<V1Node[]> {
    return this.paginate('list nodes', (_continue) =>
      this.core.listNode({ labelSelector: options.labelSelector, limit: PAGE, _continue }),
    );
  }

  /** The Node, or null when there is none of that name. */
  async getNode(name: string): Promise<V1Node | null> {
    try {
      return await this.core.readNode({ name });
    } catch (error) {
      if (apiStatusOf(error) === 404) return null;
      throw KubeApiError.from(`get node ${name}`, error);
    }
  }

  /** Non-terminal pods bound to the node, of every scheduler and namespace, terminating ones included. */
  async podsOnNode(name: string): Promise<V1Pod[]> {
    return this.listPods({ allNamespaces: true, fieldSelector: `spec.nodeName=${name},status.phase!=Succeeded,status.phase!=Failed` });
  }

  async watchNodes(handlers: ResourceHandlers<V1Node>, options: { labelSelector?: string } = {}): Promise<ResourceWatch<V1Node>> {
    return this.watch<V1Node>(
      'watch nodes',
      '/api/v1/nodes',
      () => this.core.listNode({ labelSelector: options.labelSelector }),
      handlers,
      options.labelSelector,
    );
  }

  /**
   * The accelerator nodes as the scheduling core sees them: every node of a known flavor, with the
   * capacity held by other schedulers' pods (across all namespaces) counted as external.
   */
  async listClusterNodes(flavors: readonly KubeFlavor[]): Promise<ClusterNode[]> {
    const [nodes, pods] = await Promise.all([
      this.listNodes(),
      this.listPods({ allNamespaces: true, fieldSelector: 'spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed' }),
    ]);
    const podsByNode = new Map<string, V1Pod[]>();
    for (const pod of pods) {
      const node = pod.spec?.nodeName;
      if (!node) continue;
      const onNode = podsByNode.get(node);
      if (onNode) onNode.push(pod);
      else podsByNode.set(node, [pod]);
    }
    const options = { schedulerName: this.schedulerName };
    return nodes
      .map((node) => nodeFromKube(node, flavors, podsByNode.get(node.metadata?.name ?? '') ?? [], options))
      .filter((node): node is ClusterNode => node !== null)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  // ---------------------------------------------------------------------------------------------
  // Pods
  // ---------------------------------------------------------------------------------------------

  async listPods(query: PodQuery = {}): Promise<V1Pod[]> {
    const { labelSelector, fieldSelector } = query;
    if (query.allNamespaces) {
      return this.paginate('list pods', (_continue) =>
        this.core.listPodForAllNamespaces({ labelSelector, fieldSelector, limit: PAGE, _continue }),
      );
    }
    const namespace = query.namespace ?? this.namespace;
    return this.paginate(`list pods in ${namespace}`, (_continue) =>
      this.core.listNamespacedPod({ namespace, labelSelector, fieldSelector, limit: PAGE, _continue }),
    );
  }

  /** Pods of one Quartermaster job (by the `quartermaster.io/job-id` label). */
  async listJobPods(jobId: string, namespace?: string): Promise<V1Pod[]> {
    return this.listPods({ namespace, labelSelector: `${LABEL_JOB_ID}=${jobId}` });
  }

  /** List+watch of pods; unlike makeInformer this takes a field selector (e.g. `spec.schedulerName=quartermaster`). */
  async watchPods(handlers: ResourceHandlers<V1Pod>, query: PodQuery = {}): Promise<ResourceWatch<V1Pod>> {
    const { labelSelector, fieldSelector } = query;
    if (query.allNamespaces) {
      return this.watch<V1Pod>(
        'watch pods',
        '/api/v1/pods',
        () => this.core.listPodForAllNamespaces({ labelSelector, fieldSelector }),
        handlers,
        labelSelector,
        fieldSelector,
      );
    }
    const namespace = query.namespace ?? this.namespace;
    return this.watch<V1Pod>(
      `watch pods in ${namespace}`,
      `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`,
      () => this.core.listNamespacedPod({ namespace, labelSelector, fieldSelector }),
      handlers,
      labelSelector,
      fieldSelector,
    );
  }

  /**
   * List+watch of every object of one workload kind (Jobs, JobSets, …) in every namespace, as the API server
   * sends it (plain JSON, read through the kind's WorkloadKindSpec). Listed through the custom-objects API,
   * which serves built-in groups too (`/apis/batch/v1/jobs`), so every kind's objects look alike.
   */
  async watchWorkloads(kind: WorkloadKind, handlers: ResourceHandlers<KubeObject>): Promise<ResourceWatch<KubeObject>> {
    const { apiVersion, plural } = WORKLOAD_KINDS[kind];
    const [group, version] = apiVersion.split('/') as [string, string];
    return this.watch<KubeObject & KubernetesObject>(
      `watch ${plural}`,
      `/apis/${apiVersion}/${plural}`,
      () => this.custom.listClusterCustomObject({ group, version, plural }) as Promise<KubernetesListObject<KubeObject & KubernetesObject>>,
      handlers,
    );
  }

  /**
   * Gangs of foreign unbound pods that ask to be managed by Quartermaster (quartermaster.io/gang
   * annotations), across all namespaces, with the issues of pods that cannot be imported (see
   * gangImportsFromPods). A gang with a pod already bound shows as incomplete.
   */
  async listGangImports(flavors: readonly KubeFlavor[]): Promise<{ gangs: GangImport[]; issues: ImportIssue[] }> {
    // Only unbound pods: a gang with a bound pod is not importable anyway, and on a big cluster this list,
    // made every QM_KUBE_IMPORT_EVERY_MS by every scheduler replica, must not carry every running pod.
    const pods = await this.listPods({ allNamespaces: true, fieldSelector: 'spec.nodeName=,status.phase!=Succeeded,status.phase!=Failed' });
    return gangImportsFromPods(pods, flavors);
  }

  // ---------------------------------------------------------------------------------------------
  // Namespaces
  // ---------------------------------------------------------------------------------------------

  async watchNamespaces(handlers: ResourceHandlers<V1Namespace>): Promise<ResourceWatch<V1Namespace>> {
    return this.watch<V1Namespace>('watch namespaces', '/api/v1/namespaces', () => this.core.listNamespace(), handlers);
  }

  async getNamespace(name: string): Promise<V1Namespace | null> {
    try {
      return await this.core.readNamespace({ name });
    } catch (error) {
      if (apiStatusOf(error) === 404) return null;
      throw KubeApiError.from(`get namespace ${name}`, error);
    }
  }

  /** Creates the namespace with these labels; one that exists already is returned as it is (`created: false`). */
  async createNamespace(name: string, labels: Record<string, string>): Promise<{ namespace: V1Namespace; created: boolean }> {
    try {
      const namespace = await this.core.createNamespace({ body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } }, fieldManager: this.fieldManager });
      return { namespace, created: true };
    } catch (error) {
      if (apiStatusOf(error) !== 409) throw KubeApiError.from(`create namespace ${name}`, error);
    }
    const existing = await this.getNamespace(name);
    if (existing === null) throw new KubeApiError(`create namespace ${name}`, 409, 'namespace existed, then vanished; retry', { retryable: true });
    return { namespace: existing, created: false };
  }

  // ---------------------------------------------------------------------------------------------
  // Pods
  // ---------------------------------------------------------------------------------------------

  async getPod(name: string, namespace = this.namespace): Promise<V1Pod | null> {
    try {
      return await this.core.readNamespacedPod({ name, namespace });
    } catch (error) {
      if (apiStatusOf(error) === 404) return null;
      throw KubeApiError.from(`get pod ${namespace}/${name}`, error);
    }
  }

  /**
   * Creates the pod; if a pod of that name exists for the same job (`quartermaster.io/job-id`), returns it
   * with `created: false`. Throws PodTerminatingError while an earlier incarnation is being deleted, and
   * PodConflictError when the name is taken by another job's (or a foreign) pod.
   */
  async createPod(manifest: V1Pod): Promise<{ pod: V1Pod; created: boolean }> {
    const name = manifest.metadata?.name;
    const namespace = manifest.metadata?.namespace ?? this.namespace;
    if (!name) throw new KubeApiError('create pod', 422, 'the manifest has no metadata.name');
    try {
      const pod = await this.core.createNamespacedPod({ namespace, body: manifest, fieldManager: this.fieldManager });
      return { pod, created: true };
    } catch (error) {
      if (apiStatusOf(error) !== 409) throw KubeApiError.from(`create pod ${namespace}/${name}`, error);
    }
    const existing = await this.getPod(name, namespace);
    if (existing === null) {
      // Deleted between our create and get: let the caller retry.
      throw new KubeApiError(`create pod ${namespace}/${name}`, 409, 'pod existed, then vanished; retry', { retryable: true });
    }
    const wanted = manifest.metadata?.labels?.[LABEL_JOB_ID];
    const found = existing.metadata?.labels?.[LABEL_JOB_ID];
    if (wanted === undefined || found !== wanted) {
      throw new PodConflictError(namespace, name, `it belongs to job ${found ?? '(none)'}, not ${wanted ?? '(none)'}`);
    }
    if (existing.metadata?.deletionTimestamp) throw new PodTerminatingError(namespace, name);
    return { pod: existing, created: false };
  }

  /**
   * Binds the pod to the node (pods/binding). Already bound to that node → 'already-bound'; bound to
   * another → PodBoundElsewhereError; no such pod (or, with `uid`, a different pod of that name) →
   * PodNotFoundError.
   */
  async bindPod(name: string, node: string, options: { namespace?: string; uid?: string; annotations?: Record<string, string> } = {}): Promise<BindResult> {
    const namespace = options.namespace ?? this.namespace;
    try {
      await this.core.createNamespacedPodBinding({
        name,
        namespace,
        fieldManager: this.fieldManager,
        body: {
          apiVersion: 'v1',
          kind: 'Binding',
          // The API server copies the Binding's annotations onto the pod, in the same write that binds it.
          metadata: { name, namespace, ...(options.uid ? { uid: options.uid } : {}), ...(options.annotations ? { annotations: options.annotations } : {}) },
          target: { apiVersion: 'v1', kind: 'Node', name: node },
        },
      });
      return 'bound';
    } catch (error) {
      const status = apiStatusOf(error);
      if (status === 404) throw new PodNotFoundError(namespace, name);
      if (status !== 409) throw KubeApiError.from(`bind pod ${namespace}/${name} to ${node}`, error);
      const pod = await this.getPod(name, namespace);
      if (pod === null) throw new PodNotFoundError(namespace, name);
      if (options.uid && pod.metadata?.uid !== options.uid) {
        throw new PodNotFoundError(namespace, name, `replaced by another pod (uid ${pod.metadata?.uid ?? '?'})`);
      }
      const bound = pod.spec?.nodeName;
      if (bound === node) return 'already-bound';
      if (bound) throw new PodBoundElsewhereError(namespace, name, node, bound);
      throw KubeApiError.from(`bind pod ${namespace}/${name} to ${node}`, error);
    }
  }

  /**
   * Evicts through the Eviction API (honours PodDisruptionBudgets and the pod's grace period). Gone →
   * 'not-found'; refused by a budget → EvictionBlockedError (retry later). With `uid`, only that
   * incarnation is evicted (a pod of the same name made since is left alone: 'not-found').
   */
  async evictPod(name: string, options: { namespace?: string; gracePeriodSeconds?: number; uid?: string } = {}): Promise<RemoveResult> {
    const namespace = options.namespace ?? this.namespace;
    const deleteOptions = {
      ...(options.gracePeriodSeconds === undefined ? {} : { gracePeriodSeconds: options.gracePeriodSeconds }),
      ...(options.uid === undefined ? {} : { preconditions: { uid: options.uid } }),
    };
    try {
      await this.core.createNamespacedPodEviction({
        name,
        namespace,
        body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace }, ...(Object.keys(deleteOptions).length === 0 ? {} : { deleteOptions }) },
      });
      return 'evicted';
    } catch (error) {
      const status = apiStatusOf(error);
      if (status === 404) return 'not-found';
      // A uid precondition that no longer matches: the incarnation we meant is gone (a conflict of another
      // kind, with that incarnation still there, is thrown below and retried).
      if (status === 409 && options.uid && (await this.getPod(name, namespace))?.metadata?.uid !== options.uid) return 'not-found';
      if (status === 429) {
        throw new EvictionBlockedError(namespace, name, KubeApiError.from('evict', error).message);
      }
      throw KubeApiError.from(`evict pod ${namespace}/${name}`, error);
    }
  }

  /** Deletes the pod (gone → 'not-found'). With `uid`, only that incarnation is deleted. */
  async deletePod(
    name: string,
    options: { namespace?: string; gracePeriodSeconds?: number; uid?: string } = {},
  ): Promise<RemoveResult> {
    const namespace = options.namespace ?? this.namespace;
    try {
      await this.core.deleteNamespacedPod({
        name,
        namespace,
        gracePeriodSeconds: options.gracePeriodSeconds,
        body: options.uid ? { preconditions: { uid: options.uid } } : undefined,
      });
      return 'deleted';
    } catch (error) {
      const status = apiStatusOf(error);
      if (status === 404) return 'not-found';
      // A uid precondition that no longer matches: the incarnation we meant is gone (a conflict of another
      // kind, with that incarnation still there, is thrown below and retried).
      if (status === 409 && options.uid && (await this.getPod(name, namespace))?.metadata?.uid !== options.uid) return 'not-found';
      throw KubeApiError.from(`delete pod ${namespace}/${name}`, error);
    }
  }

  /** Strategic-merge patch of the status subresource — what a kubelet does; used by tests and executors. */
  async patchPodStatus(name: string, status: V1PodStatus, namespace = this.namespace): Promise<V1Pod> {
    try {
      return await this.core.patchNamespacedPodStatus(
        { name, namespace, body: { status }, fieldManager: this.fieldManager },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      );
    } catch (error) {
      if (apiStatusOf(error) === 404) throw new PodNotFoundError(namespace, name);
      throw KubeApiError.from(`patch status of pod ${namespace}/${name}`, error);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Leader election (coordination.k8s.io/v1 Lease)
  // ---------------------------------------------------------------------------------------------

  /**
   * One round of leader election: create the Lease, renew it if `holder` holds it, take it over if it is
   * free or expired, else report who holds it. Concurrent candidates race on resourceVersion; the loser
   * sees `held: false`. Same contract as libs/scheduling's LeaseStore.acquireOrRenew.
   */
  async acquireOrRenewLease(
    name: string,
    holder: string,
    ttlMs: number,
    options: { namespace?: string; now?: Date } = {},
  ): Promise<LeaseState> {
    const namespace = options.namespace ?? this.namespace;
    const now = options.now ?? new Date();
    const existing = await this.readLease(name, namespace);
    if (existing === null) {
      const spec = nextLeaseSpec(null, { action: 'take-over' }, holder, ttlMs, now);
      try {
        const created = await this.coordination.createNamespacedLease({
          namespace,
          body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace }, spec },
          fieldManager: this.fieldManager,
        });
        return leaseStateOf(leaseRecordOf(created), holder);
      } catch (error) {
        if (apiStatusOf(error) !== 409) throw KubeApiError.from(`create lease ${namespace}/${name}`, error);
        return this.observeLease(name, namespace, holder); // another candidate created it first
      }
    }
    const record = leaseRecordOf(existing);
    const decision = decideLease(record, holder, now);
    if (decision.action === 'wait') return leaseStateOf(record, holder);
    return this.writeLease(existing, nextLeaseSpec(record, decision, holder, ttlMs, now), holder);
  }

  /** Gives the lease up if `holder` holds it (graceful shutdown), so a standby takes over at once. */
  async releaseLease(name: string, holder: string, options: { namespace?: string; now?: Date } = {}): Promise<void> {
    const namespace = options.namespace ?? this.namespace;
    const existing = await this.readLease(name, namespace);
    if (existing === null) return;
    const record = leaseRecordOf(existing);
    if (record.holder !== holder) return;
    await this.writeLease(existing, { ...existing.spec, holderIdentity: undefined, leaseTransitions: record.transitions }, holder);
  }

  async readLease(name: string, namespace = this.namespace): Promise<V1Lease | null> {
    try {
      return await this.coordination.readNamespacedLease({ name, namespace });
    } catch (error) {
      if (apiStatusOf(error) === 404) return null;
      throw KubeApiError.from(`read lease ${namespace}/${name}`, error);
    }
  }

  private async writeLease(existing: V1Lease, spec: V1Lease['spec'], caller: string): Promise<LeaseState> {
    const name = existing.metadata!.name!;
    const namespace = existing.metadata!.namespace ?? this.namespace;
    try {
      const written = await this.coordination.replaceNamespacedLease({
        name,
        namespace,
        // resourceVersion makes this a compare-and-swap: a concurrent writer makes it fail with 409.
        body: { ...existing, spec },
        fieldManager: this.fieldManager,
      });
      return leaseStateOf(leaseRecordOf(written), caller);
    } catch (error) {
      if (apiStatusOf(error) !== 409) throw KubeApiError.from(`update lease ${namespace}/${name}`, error);
      return this.observeLease(name, namespace, caller);
    }
  }

  private async observeLease(name: string, namespace: string, caller: string): Promise<LeaseState> {
    const lease = await this.readLease(name, namespace);
    if (lease === null) throw new KubeApiError(`read lease ${namespace}/${name}`, 404, 'lease vanished during election');
    return leaseStateOf(leaseRecordOf(lease), caller);
  }

  // ---------------------------------------------------------------------------------------------
  // Plumbing
  // ---------------------------------------------------------------------------------------------

  private async paginate<T extends KubernetesObject>(
    operation: string,
    page: (continueToken: string | undefined) => Promise<KubernetesListObject<T>>,
  ): Promise<T[]> {
    const items: T[] = [];
    let token: string | undefined;
    try {
      do {
        const list = await page(token);
        items.push(...list.items);
        token = list.metadata?._continue || undefined;
      } while (token);
    } catch (error) {
      throw KubeApiError.from(operation, error);
    }
    return items;
  }

  private async watch<T extends KubernetesObject>(
    operation: string,
    path: string,
    listFn: () => Promise<KubernetesListObject<T>>,
    handlers: ResourceHandlers<T>,
    labelSelector?: string,
    fieldSelector?: string,
  ): Promise<ResourceWatch<T>> {
    const informer = new ListWatch<T>(path, new Watch(this.kubeConfig), listFn, false, labelSelector, fieldSelector);
    if (handlers.onAdd) informer.on('add', handlers.onAdd);
    if (handlers.onUpdate) informer.on('update', handlers.onUpdate);
    if (handlers.onDelete) informer.on('delete', handlers.onDelete);

    let stopped = false;
    let delayMs = 1000;
    let timer: NodeJS.Timeout | undefined;
    let startupError: KubeApiError | undefined;
    let starting = true;
    // Events flowing again reset the backoff.
    const healthy = (): void => {
      delayMs = 1000;
    };
    informer.on('add', healthy);
    informer.on('update', healthy);
    informer.on('delete', healthy);
    informer.on('error', (raw: unknown) => {
      const error = KubeApiError.from(operation, raw);
      if (starting) {
        startupError = error;
        return;
      }
      if (stopped) return; // stop() aborts the watch request: not an error
      handlers.onError?.(error);
      // ListWatch does not restart after an error: do it, with backoff.
      timer = setTimeout(() => {
        timer = undefined;
        if (!stopped) informer.start().catch((e: unknown) => handlers.onError?.(KubeApiError.from(operation, e)));
      }, delayMs);
      timer.unref();
      delayMs = Math.min(delayMs * 2, 30_000);
    });

    await informer.start();
    starting = false;
    if (startupError) {
      await informer.stop();
      throw startupError;
    }
    return {
      list: () => informer.list(),
      get: (name, namespace) => informer.get(name, namespace),
      stop: async () => {
        stopped = true;
        if (timer) clearTimeout(timer);
        await informer.stop();
      },
    };
  }
}
