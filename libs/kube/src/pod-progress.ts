import type { V1Pod } from '@kubernetes/client-node';

/** On a pod of a job that checkpoints: when its executor last wrote a checkpoint (RFC 3339). */
export const ANNOTATION_LAST_CHECKPOINT_AT = 'quartermaster.io/last-checkpoint-at';
/** On a pod of a job that checkpoints: the fraction of the job's work done at that checkpoint (0 … 1). */
export const ANNOTATION_COMPLETED_FRACTION = 'quartermaster.io/completed-fraction';

/** A job's progress as its executor annotated one of its pods (the REST `POST /v1/jobs/{id}/progress` body). */
export interface PodProgress {
  lastCheckpointAt: Date | null;
  completedFraction: number | null;
}

/**
 * The progress a pod's annotations report: `null` when it reports none, `{ problem }` naming the annotation
 * when a value is malformed (not a time, a time more than a minute ahead, a fraction outside 0 … 1), so the
 * executor can be told on its pod rather than the report silently dropped.
 */
export function progressOfPod(pod: V1Pod, now: number): PodProgress | { problem: string } | null {
  const annotations = pod.metadata?.annotations ?? {};
  const at = annotations[ANNOTATION_LAST_CHECKPOINT_AT]?.trim();
  const fraction = annotations[ANNOTATION_COMPLETED_FRACTION]?.trim();
  if (!at && !fraction) return null;
  const progress: PodProgress = { lastCheckpointAt: null, completedFraction: null };
  if (at) {
    const time = /^\d{4}-\d{2}-\d{2}T/.test(at) ? new Date(at) : new Date(NaN);
    if (Number.isNaN(time.getTime())) return { problem: `${ANNOTATION_LAST_CHECKPOINT_AT}=${at} is not an RFC 3339 time` };
    if (time.getTime() > now + 60_000) return { problem: `${ANNOTATION_LAST_CHECKPOINT_AT}=${at} is in the future` };
    progress.lastCheckpointAt = time;
  }
  if (fraction) {
    const value = /^(\d+(\.\d*)?|\.\d+)$/.test(fraction) ? Number(fraction) : NaN;
    if (!(value >= 0 && value <= 1)) return { problem: `${ANNOTATION_COMPLETED_FRACTION}=${fraction} must be a number from 0 to 1` };
    progress.completedFraction = value;
  }
  return progress;
}
