import type { V1Pod } from '@kubernetes/client-node';
import {
  conditionMessage,
  integerField,
  list,
  podTemplate,
  record,
  trueCondition,
  type Derived,
  type KubeObject,
  type WorkloadKindSpec,
  type WorkloadRole,
} from './workload.js';

/** Label the JobSet controller puts on every pod: the replicatedJob it belongs to. */
export const JOBSET_REPLICATED_JOB_LABEL = 'jobset.sigs.k8s.io/replicatedjob-name';

/**
 * The roles of a JobSet spec: per replicatedJob, `replicas` (default 1) Jobs of min(parallelism,
 * completions) pods each. Shared with TrainJob, whose pods come from the JobSet it generates.
 */
export function jobSetRoles(object: KubeObject): Derived<WorkloadRole[]> {
  const replicatedJobs = list(record(object.spec).replicatedJobs).map(record);
  if (replicatedJobs.length === 0) return { ok: false, field: 'spec.replicatedJobs', message: 'is empty' };
  const roles: WorkloadRole[] = [];
  for (const [i, rj] of replicatedJobs.entries()) {
    const at = `spec.replicatedJobs[${i}]`;
    const name = typeof rj.name === 'string' ? rj.name : `replicated-job-${i}`;
    const replicas = integerField(rj.replicas, 1);
    if (replicas === null)
      return { ok: false, field: `${at}.replicas`, message: 'must be a non-negative integer' };
    const jobSpec = record(record(rj.template).spec);
    const parallelism = integerField(jobSpec.parallelism, 1);
    if (parallelism === null)
      return {
        ok: false,
        field: `${at}.template.spec.parallelism`,
        message: 'must be a non-negative integer',
      };
    const completions = integerField(jobSpec.completions, parallelism);
    if (completions === null)
      return {
        ok: false,
        field: `${at}.template.spec.completions`,
        message: 'must be a non-negative integer',
      };
    const template = podTemplate(jobSpec.template);
    if (!template)
      return { ok: false, field: `${at}.template.spec.template`, message: 'has no pod spec with containers' };
    const count = replicas * Math.min(parallelism, completions);
    roles.push({ name, count, minCount: count, template });
  }
  return { ok: true, value: roles };
}

/** JobSet (jobset.x-k8s.io): the gang is the sum over replicatedJobs. Suspended through `spec.suspend`. */
export const jobSetKind: WorkloadKindSpec = {
  kind: 'JobSet',
  apiVersion: 'jobset.x-k8s.io/v1alpha2',
  plural: 'jobsets',
  roles: (object) => jobSetRoles(object),
  status(object) {
    const completed = trueCondition(object, 'Completed');
    if (completed) return { phase: 'succeeded', message: conditionMessage(completed, 'JobSet completed') };
    const failed = trueCondition(object, 'Failed');
    if (failed) return { phase: 'failed', message: conditionMessage(failed, 'JobSet failed') };
    return { phase: 'active' };
  },
  suspendPatch: (suspend) => ({ spec: { suspend } }),
  roleOf: jobSetRoleOf,
};

/** The replicatedJob a JobSet's pod (or a TrainJob's, through its JobSet) comes from: its role. */
export function jobSetRoleOf(pod: V1Pod): string | null {
  return pod.metadata?.labels?.[JOBSET_REPLICATED_JOB_LABEL] ?? null;
}
