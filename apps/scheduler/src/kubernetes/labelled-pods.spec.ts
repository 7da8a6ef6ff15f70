import { describe, expect, it } from '@jest/globals';
import type { V1Pod } from '@kubernetes/client-node';
import { LABEL_JOB_ID, isGangImportCandidate } from '#kube';
import { LABELLED_MEMORY_MS, LabelledPods } from './labelled-pods.js';

const pod = (uid: string, labels: Record<string, string> = {}): V1Pod => ({
  metadata: { name: uid, uid, labels, annotations: { 'quartermaster.io/gang': 'g' } },
});

describe('LabelledPods', () => {
  it('a pod it labelled counts as labelled until the memory runs out; a label the watch shows wins', () => {
    let t = 0;
    const memory = new LabelledPods(() => new Date(t));
    expect(memory.jobIdOf(pod('a'))).toBeUndefined();
    memory.remember('a', 'job-1');
    expect(memory.jobIdOf(pod('a'))).toBe('job-1');
    const seen = memory.asLabelled(pod('a'));
    expect(seen.metadata?.labels?.[LABEL_JOB_ID]).toBe('job-1');
    expect(isGangImportCandidate(seen)).toBe(false); // the gang importer skips it
    expect(isGangImportCandidate(pod('a'))).toBe(true);
    t = LABELLED_MEMORY_MS;
    expect(memory.jobIdOf(pod('a'))).toBeUndefined();
    memory.remember('b', 'job-2');
    expect(memory.jobIdOf(pod('b', { [LABEL_JOB_ID]: 'job-3' }))).toBe('job-3');
    expect(memory.jobIdOf(pod('b'))).toBeUndefined(); // forgotten once the watch showed a label
    memory.remember(null, 'job-4'); // a pod without a uid is not remembered
    expect(memory.asLabelled(pod('c'))).toEqual(pod('c'));
  });
});
