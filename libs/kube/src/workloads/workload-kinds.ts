import { jobKind } from './workload-job.js';
import { jobSetKind } from './workload-jobset.js';
import { leaderWorkerSetKind } from './workload-lws.js';
import { rayClusterKind, rayJobKind } from './workload-ray.js';
import { trainJobKind } from './workload-trainjob.js';
import type { WorkloadKind, WorkloadKindSpec } from './workload.js';

/** Every workload kind Quartermaster gang-schedules, by kind. */
export const WORKLOAD_KINDS: Readonly<Record<WorkloadKind, WorkloadKindSpec>> = {
  Job: jobKind,
  JobSet: jobSetKind,
  TrainJob: trainJobKind,
  RayCluster: rayClusterKind,
  RayJob: rayJobKind,
  LeaderWorkerSet: leaderWorkerSetKind,
};

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** The workload kind of an object or owner reference (same API group and kind; any version), or null. */
export function workloadKindOf(ref: { apiVersion?: string; kind?: string }): WorkloadKindSpec | null {
  if (!ref.kind || !ref.apiVersion || !(ref.kind in WORKLOAD_KINDS)) return null;
  const spec = WORKLOAD_KINDS[ref.kind as WorkloadKind];
  return groupOf(spec.apiVersion) === groupOf(ref.apiVersion) ? spec : null;
}
