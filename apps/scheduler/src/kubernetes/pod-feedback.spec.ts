import { describe, expect, it } from '@jest/globals';
import { PASSING_STATE_QUIET_MS, conditionReason, elasticReplicaReport, incompleteGangReport, invalidGangReport, startTime, waitingReport, type WaitingJob } from './pod-feedback.js';

const now = new Date('2026-12-02T10:00:00Z');
const job = (overrides: Partial<WaitingJob> = {}): WaitingJob => ({
  id: 'j1',
  name: 'llama',
  state: 'PENDING',
  pendingCode: null,
  pendingMessage: null,
  pendingPosition: null,
  pendingEstimatedStartAt: null,
  flavor: null,
  admittedReplicas: null,
  replicas: 2,
  queuedAt: new Date('2026-12-02T09:59:00Z'),
  admittedAt: null,
  ...overrides,
});

describe('pod feedback', () => {
  it('condition reasons are the pending codes in CamelCase', () => {
    expect(conditionReason('QUOTA_EXCEEDED')).toBe('QuotaExceeded');
    expect(conditionReason('TOPOLOGY_UNSATISFIABLE')).toBe('TopologyUnsatisfiable');
    expect(conditionReason('INVALID')).toBe('Invalid');
  });

  it('expected start: the clock on the same UTC day, the date otherwise', () => {
    expect(startTime(new Date('2026-12-02T14:32:10Z'), now)).toBe('14:32 UTC');
    expect(startTime(new Date('2026-12-03T01:05:00Z'), now)).toBe('2026-12-03 01:05 UTC');
  });

  it('a pending job: its code, message, position and expected start; Warning only when someone must act', () => {
    const quota = waitingReport(
      job({ pendingCode: 'QUOTA_EXCEEDED', pendingMessage: 'team vision uses 32 of 32 nominal h100', pendingPosition: 3, pendingEstimatedStartAt: new Date('2026-12-02T14:32:00Z') }),
      now,
    );
    expect(quota).toEqual({
      status: 'False',
      reason: 'QuotaExceeded',
      message: 'QUOTA_EXCEEDED: team vision uses 32 of 32 nominal h100; position 3 in the queue; expected to start 14:32 UTC',
      eventType: 'Normal',
    });
    expect(waitingReport(job({ pendingCode: 'UNSATISFIABLE', pendingMessage: 'never fits' }), now)).toMatchObject({ reason: 'Unsatisfiable', eventType: 'Warning', message: 'UNSATISFIABLE: never fits' });
  });

  it('undecided, admitted, and running or ended jobs', () => {
    expect(waitingReport(job(), now)).toMatchObject({ reason: 'Queued', message: 'job llama (j1) waits for a scheduling cycle' });
    expect(waitingReport(job({ pendingMessage: 'preempted by vision/x' }), now)?.message).toBe('job llama (j1) waits for a scheduling cycle: preempted by vision/x');
    expect(waitingReport(job({ state: 'ADMITTED', flavor: 'h100', admittedReplicas: 2, admittedAt: new Date('2026-12-02T09:59:30Z') }), now)).toMatchObject({ reason: 'Admitted', event: false });
    for (const state of ['RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'] as const) expect(waitingReport(job({ state, admittedReplicas: 2 }), now)).toBeNull();
  });

  it('passing states say nothing for their first PASSING_STATE_QUIET_MS: not yet looked at by a cycle, or admitted and being bound', () => {
    const justNow = new Date(now.getTime() - PASSING_STATE_QUIET_MS + 1);
    const before = new Date(now.getTime() - PASSING_STATE_QUIET_MS);
    expect(waitingReport(job({ queuedAt: justNow }), now)).toBeNull();
    expect(waitingReport(job({ queuedAt: before }), now)).toMatchObject({ reason: 'Queued' });
    // A requeued job's message, and any decision of a cycle, show at once.
    expect(waitingReport(job({ queuedAt: justNow, pendingMessage: 'preempted by vision/x' }), now)).toMatchObject({ reason: 'Queued' });
    expect(waitingReport(job({ queuedAt: justNow, pendingCode: 'QUOTA_EXCEEDED', pendingMessage: 'full' }), now)).toMatchObject({ reason: 'QuotaExceeded' });
    for (const state of ['ADMITTED', 'BINDING'] as const) {
      expect(waitingReport(job({ state, flavor: 'h100', admittedReplicas: 2, admittedAt: justNow }), now)).toBeNull();
      expect(waitingReport(job({ state, flavor: 'h100', admittedReplicas: 2, admittedAt: before }), now)).toMatchObject({ reason: 'Admitted', event: false });
    }
  });

  it('invalid and incomplete gangs', () => {
    expect(invalidGangReport('gang ns/g', ['a', 'b'])).toMatchObject({ reason: 'InvalidGang', eventType: 'Warning', message: 'Quartermaster cannot import gang ns/g: a; b. The pod waits until this is fixed' });
    expect(incompleteGangReport('ns/g', 2, 3).message).toMatch(/^gang ns\/g has 2 of 3 pods unbound/);
  });

  it('an elastic gang admitted below its size: the pods above its admitted replicas say so, whether it binds or runs', () => {
    for (const state of ['BINDING', 'RUNNING'] as const) {
      const report = elasticReplicaReport(job({ state, flavor: 'h100', admittedReplicas: 2, replicas: 4 }));
      expect(report).toMatchObject({ status: 'False', reason: 'ElasticReplicaNotAdmitted', eventType: 'Normal' });
      expect(report!.message).toBe(
        'job llama (j1) was admitted with 2 of 4 replicas on h100 (its elastic minimum was met, quota or capacity allowed no more); ' +
          'this pod is above them and gets no node while the gang runs: Quartermaster does not grow a running gang',
      );
    }
    expect(elasticReplicaReport(job({ state: 'RUNNING', flavor: 'h100', admittedReplicas: 4, replicas: 4 }))).toBeNull();
    expect(elasticReplicaReport(job({ state: 'PENDING', replicas: 4 }))).toBeNull();
  });
});
