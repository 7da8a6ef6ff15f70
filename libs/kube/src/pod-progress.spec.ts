import { describe, expect, it } from '@jest/globals';
import type { V1Pod } from '@kubernetes/client-node';
import { ANNOTATION_COMPLETED_FRACTION, ANNOTATION_LAST_CHECKPOINT_AT, progressOfPod } from './pod-progress.js';

const now = Date.parse('2026-12-02T12:00:00Z');
const pod = (annotations: Record<string, string>): V1Pod => ({ metadata: { name: 'p', annotations } });

describe('progressOfPod', () => {
  it('reads the last checkpoint and the completed fraction, either alone', () => {
    expect(progressOfPod(pod({ [ANNOTATION_LAST_CHECKPOINT_AT]: '2026-12-02T11:59:00Z', [ANNOTATION_COMPLETED_FRACTION]: '0.5' }), now)).toEqual({
      lastCheckpointAt: new Date('2026-12-02T11:59:00Z'),
      completedFraction: 0.5,
    });
    expect(progressOfPod(pod({ [ANNOTATION_COMPLETED_FRACTION]: '1' }), now)).toEqual({ lastCheckpointAt: null, completedFraction: 1 });
    expect(progressOfPod(pod({ [ANNOTATION_LAST_CHECKPOINT_AT]: '2026-12-02T12:00:30+00:00' }), now)).toEqual({
      lastCheckpointAt: new Date('2026-12-02T12:00:30Z'),
      completedFraction: null,
    });
  });

  it('a pod without the annotations reports nothing', () => {
    expect(progressOfPod(pod({ other: 'x' }), now)).toBeNull();
    expect(progressOfPod({ metadata: { name: 'p' } }, now)).toBeNull();
  });

  it.each([
    [{ [ANNOTATION_LAST_CHECKPOINT_AT]: 'yesterday' }, 'is not an RFC 3339 time'],
    [{ [ANNOTATION_LAST_CHECKPOINT_AT]: '1700000000' }, 'is not an RFC 3339 time'],
    [{ [ANNOTATION_LAST_CHECKPOINT_AT]: '2026-12-02T13:00:00Z' }, 'is in the future'],
    [{ [ANNOTATION_COMPLETED_FRACTION]: '1.5' }, 'must be a number from 0 to 1'],
    [{ [ANNOTATION_COMPLETED_FRACTION]: '-0.1' }, 'must be a number from 0 to 1'],
    [{ [ANNOTATION_COMPLETED_FRACTION]: 'half' }, 'must be a number from 0 to 1'],
  ])('a malformed value is a problem naming the annotation: %j', (annotations, problem) => {
    const got = progressOfPod(pod(annotations), now);
    expect(got).toEqual({ problem: expect.stringContaining(problem) });
    expect((got as { problem: string }).problem).toContain(Object.keys(annotations)[0]);
  });
});
