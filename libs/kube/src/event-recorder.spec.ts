import { describe, expect, it } from '@jest/globals';
import { eventName, involvedPod } from './event-recorder.js';
import { showsCondition } from './pod-status-reporter.js';

describe('event names and conditions', () => {
  const pod = involvedPod({ metadata: { namespace: 'ns', name: 'p-0', uid: 'u1' } });

  it('one name per (object, type, reason, message): repeats count on one Event, anything else is another', () => {
    const name = eventName(pod, 'Normal', 'QuotaExceeded', 'm');
    expect(name).toMatch(/^p-0\.[0-9a-f]{16}$/);
    expect(eventName(pod, 'Normal', 'QuotaExceeded', 'm')).toBe(name);
    expect(eventName(pod, 'Normal', 'QuotaExceeded', 'm2')).not.toBe(name);
    expect(eventName(pod, 'Warning', 'QuotaExceeded', 'm')).not.toBe(name);
    expect(eventName({ ...pod, uid: 'u2' }, 'Normal', 'QuotaExceeded', 'm')).not.toBe(name);
    expect(eventName({ ...pod, name: 'x'.repeat(300) }, 'Normal', 'r', 'm').length).toBeLessThanOrEqual(253);
  });

  it('a pod shows a condition only with the same status, reason and message', () => {
    const p = { status: { conditions: [{ type: 'PodScheduled', status: 'False', reason: 'QuotaExceeded', message: 'm' }] } };
    expect(showsCondition(p, { status: 'False', reason: 'QuotaExceeded', message: 'm' })).toBe(true);
    expect(showsCondition(p, { status: 'False', reason: 'QuotaExceeded', message: 'm2' })).toBe(false);
    expect(showsCondition(p, { status: 'False', reason: 'Queued', message: 'm' })).toBe(false);
    expect(showsCondition({}, { status: 'False', reason: 'Queued', message: 'm' })).toBe(false);
  });
});
