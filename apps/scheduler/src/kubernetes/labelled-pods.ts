import type { V1Pod } from '@kubernetes/client-node';
import { LABEL_JOB_ID } from '#kube';

/**
 * A pod an importer labelled counts as labelled for this long, though the watch has not shown the label yet: a
 * pass nudged by the gang's next pod often runs before the watch delivers the last pass's patches, and it
 * patched those pods again (and submitted the gang again) — 0.19 extra label patches per pod in bench:k8s jobsets.
 */
export const LABELLED_MEMORY_MS = 5000;
/** Pods remembered at most (the oldest are forgotten first). */
const LABELLED_MEMORY_MAX = 10_000;

/** The job-id labels an importer patched onto pods, by pod uid, for LABELLED_MEMORY_MS. */
export class LabelledPods {
  private readonly byUid = new Map<string, { jobId: string; at: number }>();

  constructor(private readonly now: () => Date = () => new Date()) {}

  /** The job a pod is labelled with: its label, else the one patched onto it a moment ago. */
  jobIdOf(pod: V1Pod): string | undefined {
    const label = pod.metadata?.labels?.[LABEL_JOB_ID];
    const uid = pod.metadata?.uid;
    if (label || !uid) {
      if (uid) this.byUid.delete(uid);
      return label;
    }
    const here = this.byUid.get(uid);
    if (!here) return undefined;
    if (this.now().getTime() - here.at < LABELLED_MEMORY_MS) return here.jobId;
    this.byUid.delete(uid);
    return undefined;
  }

  /** The pod as the watch will show it: with the job-id label this importer patched onto it, if any. */
  asLabelled(pod: V1Pod): V1Pod {
    if (pod.metadata?.labels?.[LABEL_JOB_ID]) return pod;
    const jobId = this.jobIdOf(pod);
    return jobId ? { ...pod, metadata: { ...pod.metadata, labels: { ...pod.metadata?.labels, [LABEL_JOB_ID]: jobId } } } : pod;
  }

  /** The pod of this uid was just labelled with `jobId`. */
  remember(uid: string | null | undefined, jobId: string): void {
    if (!uid) return;
    this.byUid.delete(uid);
    this.byUid.set(uid, { jobId, at: this.now().getTime() });
    if (this.byUid.size > LABELLED_MEMORY_MAX) this.byUid.delete(this.byUid.keys().next().value!);
  }
}
