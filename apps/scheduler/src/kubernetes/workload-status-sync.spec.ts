import { describe, expect, it } from '@jest/globals';
import { workloadVerdict } from './workload-status-sync.js';

describe('what a workload job becomes when its workload finishes', () => {
  const succeeded = { phase: 'succeeded', message: 'RayJob complete: SUCCEEDED' } as const;

  it('follows the controller while the job holds its allocation', () => {
    expect(workloadVerdict('RUNNING', succeeded)).toEqual({ to: 'SUCCEEDED', reason: 'RayJob complete: SUCCEEDED' });
    expect(workloadVerdict('RUNNING', { phase: 'failed', message: 'boom' })).toEqual({ to: 'FAILED', reason: 'boom' });
    expect(workloadVerdict('RUNNING', { phase: 'active' })).toBeNull();
    expect(workloadVerdict('PENDING', 'gone')).toEqual({ to: 'CANCELLED', reason: 'its workload was deleted' });
  });

  it('a job that never held an allocation: its workload finished before admission', () => {
    expect(workloadVerdict('PENDING', succeeded, null)).toEqual({
      to: 'CANCELLED',
      reason: 'its workload finished before admission (RayJob complete: SUCCEEDED)',
    });
  });

  it('a kept RayCluster preempted after its RayJob succeeded: it ran, lost its allocation, and says so', () => {
    const verdict = workloadVerdict('PENDING', succeeded, { reason: 'preempted by nlp/nlp-c (priority 100)' });
    expect(verdict?.to).toBe('CANCELLED');
    expect(verdict?.reason).not.toContain('before admission');
    expect(verdict?.reason).toBe(
      'its workload finished (RayJob complete: SUCCEEDED) after the job had been admitted and then lost its allocation (preempted by nlp/nlp-c (priority 100)); nothing is left to run, so it is not admitted again',
    );
  });
});
