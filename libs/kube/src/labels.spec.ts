import { describe, expect, it } from '@jest/globals';
import { replicaOfPod } from './labels.js';

describe('the replica a pod holds', () => {
  it('the Binding-given annotation of a workload pod, else the label; null for none or a malformed one', () => {
    expect(replicaOfPod({ metadata: { annotations: { 'quartermaster.io/replica': '3' } } })).toBe(3);
    expect(replicaOfPod({ metadata: { labels: { 'quartermaster.io/replica': '2' } } })).toBe(2);
    // Bound by Quartermaster after an older version labelled it: the Binding's word is the current one.
    expect(replicaOfPod({ metadata: { labels: { 'quartermaster.io/replica': '2' }, annotations: { 'quartermaster.io/replica': '5' } } })).toBe(5);
    expect(replicaOfPod({ metadata: {} })).toBeNull();
    expect(replicaOfPod({ metadata: { labels: { 'quartermaster.io/replica': 'x1' } } })).toBeNull();
  });
});
