import type { Logger } from 'pino';
import {
  WorkloadObjects,
  workloadKindOf,
  type KubeCluster,
  type KubeObject,
  type ObjectRef,
  type OwnerLookup,
  type ResourceWatch,
  type WorkloadKind,
} from '#kube';

/** How often each kind's watch is replaced by a fresh LIST+watch: the safety net for an event it missed. */
export const WORKLOAD_RESYNC_MS = 5 * 60_000;
/** A kind whose watch could not start (CRD missing, RBAC) is read by GETs, and its watch retried this much later. */
const WATCH_RETRY_MS = 30_000;

/** A watched object of `kind` was added or changed (`deleted` false), or deleted. */
export type WorkloadEvent = (kind: WorkloadKind, object: KubeObject, deleted: boolean) => void;

/** One kind's watch and when it started, or when it last failed to start. */
type KindView = { watch: ResourceWatch<KubeObject>; since: number } | { watch: null; failedAt: number };

/**
 * The workload objects (Jobs, JobSets, TrainJobs, RayClusters/RayJobs, LeaderWorkerSets) of every namespace, as
 * watches deliver them — shared by the status sync (is a job's workload finished or gone?) and the importer (the
 * owner chain of a waiting pod), which each read them by a GET per object and pass. One LIST+watch per kind,
 * started by the first read of that kind (`watch`, `current`), renewed every `resyncMs` (a fresh LIST: an event
 * the old watch missed is in it), restarted with backoff after a watch error (KubeCluster). An object a view
 * does not hold — gone, replaced by another of its name, or not delivered yet — is read by a GET; so is any
 * object of a kind that is not a workload (an LWS's StatefulSet) or whose watch cannot start (retried every 30 s).
 */
export class WorkloadViews {
  private readonly objects: WorkloadObjects;
  private readonly views = new Map<WorkloadKind, KindView>();
  private readonly starting = new Map<WorkloadKind, Promise<ResourceWatch<KubeObject> | null>>();
  private readonly listeners = new Set<WorkloadEvent>();
  private closed = false;

  constructor(
    private readonly cluster: KubeCluster,
    private readonly logger: Logger,
    private readonly resyncMs: number = WORKLOAD_RESYNC_MS,
  ) {
    this.objects = new WorkloadObjects(cluster.kubeConfig);
  }

  /** Calls `listener` on every event of every watched kind (from the initial LIST of each watch on). */
  onEvent(listener: WorkloadEvent): void {
    this.listeners.add(listener);
  }

  /**
   * The object as its kind's watch holds it; read by a GET when the watch does not hold it (with `uid`: that
   * object). Null when it does not exist.
   */
  async current(ref: ObjectRef, uid?: string): Promise<KubeObject | null> {
    const kind = workloadKindOf(ref)?.kind;
    const watch = kind ? await this.watch(kind) : null;
    const held = watch?.get(ref.name, ref.namespace);
    if (held && (uid === undefined || held.metadata?.uid === uid)) return held;
    return this.objects.read(ref);
  }

  /**
   * An owner lookup for workloadChain (the importer's pass): workloads from the views, other objects (an LWS's
   * StatefulSet) through `others`. An owner the view holds in an older incarnation (another uid) ends the chain
   * for that pass, as a stale cache did.
   */
  lookup(others: OwnerLookup): OwnerLookup {
    return (ref) => (workloadKindOf(ref) ? this.current(ref) : others(ref));
  }

  /** The kind's watch: started on first use, renewed when older than resyncMs; null while it cannot start. */
  private watch(kind: WorkloadKind): Promise<ResourceWatch<KubeObject> | null> {
    const view = this.views.get(kind);
    const now = Date.now();
    if (view?.watch && (now - view.since < this.resyncMs || this.closed)) return Promise.resolve(view.watch);
    if (!view?.watch && (this.closed || (view && now - view.failedAt < WATCH_RETRY_MS))) return Promise.resolve(null);
    let starting = this.starting.get(kind);
    if (!starting) {
      starting = this.renew(kind, view).finally(() => this.starting.delete(kind));
      this.starting.set(kind, starting);
    }
    return starting;
  }

  async stop(): Promise<void> {
    this.closed = true;
    await Promise.all(this.starting.values());
    const views = [...this.views.values()];
    this.views.clear();
    for (const view of views) await view.watch?.stop();
  }

  private async renew(kind: WorkloadKind, view: KindView | undefined): Promise<ResourceWatch<KubeObject> | null> {
    const emit = (object: KubeObject, deleted: boolean): void => {
      for (const listener of this.listeners) listener(kind, object, deleted);
    };
    try {
      const watch = await this.cluster.watchWorkloads(kind, {
        onAdd: (object) => emit(object, false),
        onUpdate: (object) => emit(object, false),
        onDelete: (object) => emit(object, true),
        onError: (error) => this.logger.warn({ err: error, kind }, 'workload watch failed; restarting'),
      });
      this.views.set(kind, { watch, since: Date.now() });
      await view?.watch?.stop();
      if (this.closed) {
        this.views.delete(kind);
        await watch.stop();
        return null;
      }
      return watch;
    } catch (error) {
      this.logger.warn({ err: error, kind }, 'workload watch cannot start; its objects are read one by one');
      if (view?.watch) {
        // Keep the old view; renew it in WATCH_RETRY_MS.
        this.views.set(kind, { watch: view.watch, since: Date.now() - this.resyncMs + WATCH_RETRY_MS });
        return view.watch;
      }
      this.views.set(kind, { watch: null, failedAt: Date.now() });
      return null;
    }
  }
}
