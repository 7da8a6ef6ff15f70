import {
  conditionMessage,
  integerField,
  podTemplate,
  record,
  trueCondition,
  type WorkloadKindSpec,
} from './workload.js';

/**
 * batch/v1 Job. The gang is the pods that run at once: `parallelism` (default 1), capped by
 * `completions` when set (an Indexed Job with completions 4 and parallelism 4 is a gang of 4). A Job
 * that needs more completions than its parallelism refills the gang's slots as pods finish. Suspended
 * through `spec.suspend` (the Job controller deletes its active pods); finished on condition Complete
 * or Failed.
 */
export const jobKind: WorkloadKindSpec = {
  kind: 'Job',
  apiVersion: 'batch/v1',
  plural: 'jobs',
  roles(object) {
    const spec = record(object.spec);
    const parallelism = integerField(spec.parallelism, 1);
    if (parallelism === null)
      return { ok: false, field: 'spec.parallelism', message: 'must be a non-negative integer' };
    const completions = integerField(spec.completions, parallelism);
    if (completions === null)
      return { ok: false, field: 'spec.completions', message: 'must be a non-negative integer' };
    const template = podTemplate(spec.template);
    if (!template) return { ok: false, field: 'spec.template', message: 'has no pod spec with containers' };
    const count = Math.min(parallelism, completions);
    return { ok: true, value: [{ name: 'pod', count, minCount: count, template }] };
  },
  status(object) {
    const complete = trueCondition(object, 'Complete');
    if (complete) return { phase: 'succeeded', message: conditionMessage(complete, 'Job completed') };
    const failed = trueCondition(object, 'Failed');
    if (failed) return { phase: 'failed', message: conditionMessage(failed, 'Job failed') };
    return { phase: 'active' };
  },
  suspendPatch: (suspend) => ({ spec: { suspend } }),
  roleOf: () => 'pod',
};
