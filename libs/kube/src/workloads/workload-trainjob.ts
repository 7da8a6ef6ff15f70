import { jobSetRoleOf, jobSetRoles } from './workload-jobset.js';
import { conditionMessage, trueCondition, type WorkloadKindSpec } from './workload.js';

/**
 * Kubeflow Trainer v2 TrainJob (trainer.kubeflow.org). Its pods come from the JobSet the Trainer
 * generates from the TrainJob and its runtime (numNodes → the `node` replicatedJob's parallelism), so
 * the gang is read from that JobSet, found in the pod's owner chain. Suspended through `spec.suspend`
 * (the Trainer suspends its JobSet); finished on condition Complete or Failed.
 */
export const trainJobKind: WorkloadKindSpec = {
  kind: 'TrainJob',
  apiVersion: 'trainer.kubeflow.org/v1alpha1',
  plural: 'trainjobs',
  roles(_object, chain) {
    const jobSet = chain.find((o) => o.kind === 'JobSet');
    if (!jobSet)
      return {
        ok: false,
        field: 'JobSet',
        message: 'the TrainJob has no JobSet yet (the Trainer creates it)',
      };
    return jobSetRoles(jobSet);
  },
  status(object) {
    const complete = trueCondition(object, 'Complete');
    if (complete) return { phase: 'succeeded', message: conditionMessage(complete, 'TrainJob completed') };
    const failed = trueCondition(object, 'Failed');
    if (failed) return { phase: 'failed', message: conditionMessage(failed, 'TrainJob failed') };
    return { phase: 'active' };
  },
  suspendPatch: (suspend) => ({ spec: { suspend } }),
  roleOf: jobSetRoleOf,
};
