import {
  BatchV1Api,
  CustomObjectsApi,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { KubeApiError, apiStatusOf } from './errors.js';
import { WORKLOAD_KINDS } from './workloads/workload-kinds.js';
import type { KubeObject, OwnerLookup, WorkloadRef } from './workloads/index.js';

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
}

/** Annotation Quartermaster puts on a workload it suspended (so it resumes only what it suspended itself). */
export const ANNOTATION_SUSPENDED_BY = 'quartermaster.io/suspended-by';

/**
 * Reads and patches workload objects (Jobs, JobSets, TrainJobs, RayClusters/RayJobs, LeaderWorkerSets, and the
 * StatefulSets and Pods of an owner chain) through the generic object API. 404 reads as null; other failures
 * are KubeApiErrors (retryable for 429/5xx/network).
 */
export class WorkloadObjects {
  private readonly api: KubernetesObjectApi;
  private readonly batch: BatchV1Api;
  private readonly custom: CustomObjectsApi;

  constructor(kubeConfig: KubeConfig) {
    this.api = KubernetesObjectApi.makeApiClient(kubeConfig);
    this.batch = kubeConfig.makeApiClient(BatchV1Api);
    this.custom = kubeConfig.makeApiClient(CustomObjectsApi);
  }

  async read(ref: ObjectRef): Promise<KubeObject | null> {
    try {
      return await this.api.read<KubernetesObject & KubeObject>({
        apiVersion: ref.apiVersion,
        kind: ref.kind,
        metadata: { name: ref.name, namespace: ref.namespace },
      });
    } catch (error) {
      if (apiStatusOf(error) === 404) return null;
      throw KubeApiError.from(`read ${ref.kind} ${ref.namespace}/${ref.name}`, error);
    }
  }

  /** An owner lookup for workloadChain that reads each object once (a cache for one pass over many pods). */
  cachedLookup(): OwnerLookup {
    const cache = new Map<string, Promise<KubeObject | null>>();
    return (ref) => {
      const key = `${ref.apiVersion}/${ref.kind}/${ref.namespace}/${ref.name}`;
      let hit = cache.get(key);
      if (!hit) {
        hit = this.read(ref);
        cache.set(key, hit);
      }
      return hit;
    };
  }

  /**
   * Deletes an object; false when it was gone already. With Foreground propagation the object stays (being
   * deleted) until the garbage collector has removed its dependents, so a controller that recreates it under
   * the same name does not find the old ones.
   */
  async delete(ref: ObjectRef, propagation: 'Background' | 'Foreground' = 'Background'): Promise<boolean> {
    try {
      await this.api.delete(
        { apiVersion: ref.apiVersion, kind: ref.kind, metadata: { name: ref.name, namespace: ref.namespace } },
        undefined,
        undefined,
        undefined,
        undefined,
        propagation,
      );
      return true;
    } catch (error) {
      if (apiStatusOf(error) === 404) return false;
      throw KubeApiError.from(`delete ${ref.kind} ${ref.namespace}/${ref.name}`, error);
    }
  }

  /**
   * JSON merge patch of a workload; false when it is gone. (Through the typed batch API or the custom-objects
   * API: the generic object API would re-serialize the patch as a whole typed object and reject it.)
   */
  async mergePatch(ref: WorkloadRef, patch: Record<string, unknown>): Promise<boolean> {
    const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    try {
      if (ref.kind === 'Job') {
        await this.batch.patchNamespacedJob(
          { name: ref.name, namespace: ref.namespace, body: patch, fieldManager: 'quartermaster' },
          merge,
        );
      } else {
        const [group, version] = WORKLOAD_KINDS[ref.kind].apiVersion.split('/') as [string, string];
        const plural = WORKLOAD_KINDS[ref.kind].plural;
        await this.custom.patchNamespacedCustomObject(
          {
            group,
            version,
            plural,
            name: ref.name,
            namespace: ref.namespace,
            body: patch,
            fieldManager: 'quartermaster',
          },
          merge,
        );
      }
      return true;
    } catch (error) {
      if (apiStatusOf(error) === 404) return false;
      throw KubeApiError.from(`patch ${ref.kind} ${ref.namespace}/${ref.name}`, error);
    }
  }

  /**
   * Suspends (or resumes) a workload whose kind has a suspend field, marking it as suspended by Quartermaster.
   * Returns 'gone' when it no longer exists (or is another object of that name), 'unsupported' for kinds
   * without suspend.
   */
  async setSuspended(workload: WorkloadRef, suspend: boolean): Promise<'done' | 'gone' | 'unsupported'> {
    const current = await this.read(workload);
    if (!current || current.metadata?.uid !== workload.uid) return 'gone';
    const patch = WORKLOAD_KINDS[workload.kind].suspendPatch(suspend, current);
    if (!patch) return 'unsupported';
    const annotations = { [ANNOTATION_SUSPENDED_BY]: suspend ? 'quartermaster' : null };
    return (await this.mergePatch(workload, { ...patch, metadata: { annotations } })) ? 'done' : 'gone';
  }
}
