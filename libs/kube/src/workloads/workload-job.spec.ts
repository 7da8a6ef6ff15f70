import { describe, expect, it } from '@jest/globals';
import { jobKind } from './workload-job.js';
import type { KubeObject } from './workload.js';

const template = { spec: { containers: [{ name: 'pi', image: 'perl:5.34.0' }], restartPolicy: 'Never' } };
const job = (spec: Record<string, unknown>, status: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: 'pi' },
  spec: { template, ...spec },
  status,
});

describe('batch/v1 Job as a workload', () => {
  it.each([
    ['no parallelism or completions: one pod', {}, 1],
    ['parallelism 4, completions unset (work queue): four at once', { parallelism: 4 }, 4],
    [
      'Indexed, completions 4, parallelism 4: a gang of four',
      { completionMode: 'Indexed', completions: 4, parallelism: 4 },
      4,
    ],
    ['completions 10, parallelism 3: three run at once', { completions: 10, parallelism: 3 }, 3],
    ['completions 2, parallelism 5: only two ever run', { completions: 2, parallelism: 5 }, 2],
  ])('%s', (_name, spec, want) => {
    const roles = jobKind.roles(job(spec), []);
    expect(roles).toEqual({ ok: true, value: [{ name: 'pod', count: want, minCount: want, template }] });
  });

  it('rejects a malformed parallelism and a template without containers', () => {
    expect(jobKind.roles(job({ parallelism: -1 }), [])).toMatchObject({
      ok: false,
      field: 'spec.parallelism',
    });
    expect(jobKind.roles({ kind: 'Job', spec: { template: { spec: {} } } }, [])).toMatchObject({
      ok: false,
      field: 'spec.template',
    });
  });

  it('is finished when its controller says Complete or Failed, and suspends through spec.suspend', () => {
    expect(jobKind.status(job({}))).toEqual({ phase: 'active' });
    expect(jobKind.status(job({}, { conditions: [{ type: 'SuccessCriteriaMet', status: 'True' }] }))).toEqual(
      { phase: 'active' },
    );
    expect(jobKind.status(job({}, { conditions: [{ type: 'Complete', status: 'True' }] }))).toEqual({
      phase: 'succeeded',
      message: 'Job completed',
    });
    expect(
      jobKind.status(
        job(
          {},
          {
            conditions: [
              {
                type: 'Failed',
                status: 'True',
                reason: 'BackoffLimitExceeded',
                message: 'Job has reached the specified backoff limit',
              },
            ],
          },
        ),
      ),
    ).toEqual({
      phase: 'failed',
      message: 'BackoffLimitExceeded: Job has reached the specified backoff limit',
    });
    expect(jobKind.status(job({}, { conditions: [{ type: 'Complete', status: 'False' }] }))).toEqual({
      phase: 'active',
    });
    expect(jobKind.suspendPatch(true, {})).toEqual({ spec: { suspend: true } });
    expect(jobKind.suspendPatch(false, {})).toEqual({ spec: { suspend: false } });
  });
});
