import { describe, expect, it } from '@jest/globals';
import { jobSetKind } from './workload-jobset.js';
import { trainJobKind } from './workload-trainjob.js';
import type { KubeObject } from './workload.js';

const pod = (image: string) => ({ spec: { containers: [{ name: 'c', image }] } });
// The shape of JobSet's examples/simple/success-policy.yaml: a leader and 2 × 2 workers.
const jobSet: KubeObject = {
  apiVersion: 'jobset.x-k8s.io/v1alpha2',
  kind: 'JobSet',
  metadata: { name: 'success-policy' },
  spec: {
    replicatedJobs: [
      {
        name: 'leader',
        replicas: 1,
        template: { spec: { parallelism: 1, completions: 1, template: pod('leader') } },
      },
      {
        name: 'workers',
        replicas: 2,
        template: { spec: { parallelism: 2, completions: 2, template: pod('worker') } },
      },
    ],
  },
};

describe('JobSet and TrainJob as workloads', () => {
  it('a JobSet is one gang: the sum over its replicatedJobs of replicas × pods per Job', () => {
    const roles = jobSetKind.roles(jobSet, []);
    expect(roles.ok && roles.value.map((r) => [r.name, r.count])).toEqual([
      ['leader', 1],
      ['workers', 4],
    ]);
  });

  it('defaults replicas and parallelism to 1 and refuses an empty JobSet', () => {
    const roles = jobSetKind.roles(
      {
        kind: 'JobSet',
        spec: { replicatedJobs: [{ name: 'w', template: { spec: { template: pod('w') } } }] },
      },
      [],
    );
    expect(roles.ok && roles.value.map((r) => r.count)).toEqual([1]);
    expect(jobSetKind.roles({ kind: 'JobSet', spec: { replicatedJobs: [] } }, [])).toMatchObject({
      ok: false,
      field: 'spec.replicatedJobs',
    });
  });

  it('reads completion from conditions Completed / Failed', () => {
    expect(
      jobSetKind.status({
        status: {
          conditions: [
            {
              type: 'Completed',
              status: 'True',
              reason: 'AllJobsCompleted',
              message: 'jobset completed successfully',
            },
          ],
        },
      }),
    ).toEqual({
      phase: 'succeeded',
      message: 'AllJobsCompleted: jobset completed successfully',
    });
    expect(jobSetKind.status({ status: { conditions: [{ type: 'Failed', status: 'True' }] } })).toMatchObject(
      { phase: 'failed' },
    );
    expect(jobSetKind.status({ status: { conditions: [{ type: 'Suspended', status: 'True' }] } })).toEqual({
      phase: 'active',
    });
  });

  it('a TrainJob’s gang is the JobSet the Trainer generated (numNodes → the node replicatedJob)', () => {
    const generated: KubeObject = {
      apiVersion: 'jobset.x-k8s.io/v1alpha2',
      kind: 'JobSet',
      spec: {
        replicatedJobs: [
          {
            name: 'node',
            replicas: 1,
            template: { spec: { parallelism: 2, completions: 2, template: pod('torch') } },
          },
        ],
      },
    };
    const trainJob: KubeObject = {
      apiVersion: 'trainer.kubeflow.org/v1alpha1',
      kind: 'TrainJob',
      spec: { runtimeRef: { name: 'torch-distributed' }, trainer: { numNodes: 2 } },
    };
    const roles = trainJobKind.roles(trainJob, [{ kind: 'Job' }, generated, trainJob]);
    expect(roles.ok && roles.value.map((r) => [r.name, r.count])).toEqual([['node', 2]]);
    expect(trainJobKind.roles(trainJob, [trainJob])).toMatchObject({ ok: false, field: 'JobSet' });
    expect(
      trainJobKind.status({ status: { conditions: [{ type: 'Complete', status: 'True' }] } }),
    ).toMatchObject({ phase: 'succeeded' });
    expect(trainJobKind.suspendPatch(true, {})).toEqual({ spec: { suspend: true } });
  });
});
