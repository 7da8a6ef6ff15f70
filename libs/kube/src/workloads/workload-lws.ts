import { integerField, podTemplate, record, type WorkloadKindSpec } from './workload.js';

/** Labels the LeaderWorkerSet controller puts on every pod of a group. */
export const LWS_NAME_LABEL = 'leaderworkerset.sigs.k8s.io/name';
export const LWS_GROUP_INDEX_LABEL = 'leaderworkerset.sigs.k8s.io/group-index';
/** A pod's index within its group: 0 is the leader. */
export const LWS_WORKER_INDEX_LABEL = 'leaderworkerset.sigs.k8s.io/worker-index';

/**
 * LeaderWorkerSet (leaderworkerset.x-k8s.io/v1): each of its `replicas` groups — a leader plus size − 1
 * workers — is one gang (the pod label group-index tells which). Serves until deleted; a group is stopped
 * by evicting its pods (the controller recreates the group, which waits for admission again).
 */
export const leaderWorkerSetKind: WorkloadKindSpec = {
  kind: 'LeaderWorkerSet',
  apiVersion: 'leaderworkerset.x-k8s.io/v1',
  plural: 'leaderworkersets',
  roles(object) {
    const lwt = record(record(object.spec).leaderWorkerTemplate);
    const size = integerField(lwt.size, 1);
    if (size === null || size < 1)
      return { ok: false, field: 'spec.leaderWorkerTemplate.size', message: 'must be a positive integer' };
    const worker = podTemplate(lwt.workerTemplate);
    if (!worker)
      return {
        ok: false,
        field: 'spec.leaderWorkerTemplate.workerTemplate',
        message: 'has no pod spec with containers',
      };
    const leader = lwt.leaderTemplate === undefined ? worker : podTemplate(lwt.leaderTemplate);
    if (!leader)
      return {
        ok: false,
        field: 'spec.leaderWorkerTemplate.leaderTemplate',
        message: 'has no pod spec with containers',
      };
    return {
      ok: true,
      value: [
        { name: 'leader', count: 1, minCount: 1, template: leader },
        { name: 'worker', count: size - 1, minCount: size - 1, template: worker },
      ],
    };
  },
  status: () => ({ phase: 'active' }),
  suspendPatch: () => null,
  groupOf(pod) {
    const index = pod.metadata?.labels?.[LWS_GROUP_INDEX_LABEL];
    return index !== undefined && /^\d+$/.test(index) ? index : null;
  },
  roleOf(pod) {
    const index = pod.metadata?.labels?.[LWS_WORKER_INDEX_LABEL];
    if (index === undefined || !/^\d+$/.test(index)) return null;
    return index === '0' ? 'leader' : 'worker';
  },
};
