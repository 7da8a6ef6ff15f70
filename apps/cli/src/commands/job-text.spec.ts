import { describe, expect, it } from '@jest/globals';
import { sourceText } from './job-text.js';

describe('sourceText (qm describe: where an imported job comes from)', () => {
  it('names the workload, its group and its pods per role', () => {
    expect(
      sourceText({
        workload: { apiVersion: 'leaderworkerset.x-k8s.io/v1', kind: 'LeaderWorkerSet', namespace: 'ml', name: 'vllm', uid: 'u-1' },
        template: { workloadGroup: '0', roles: [{ name: 'leader', count: 1, minCount: 1 }, { name: 'worker', count: 3, minCount: 1 }] },
      }),
    ).toBe('LeaderWorkerSet ml/vllm group 0 (leaderworkerset.x-k8s.io/v1, uid u-1); pods: leader 1, worker 1-3');
  });

  it('names the annotated gang of imported pods, and nothing for a job submitted to Quartermaster', () => {
    expect(sourceText({ template: { importedFrom: { namespace: 'ml', gang: 'g1' } } })).toBe('pods of gang ml/g1 (quartermaster.io/gang annotations)');
    expect(sourceText({ template: { image: 'x' } })).toBeUndefined();
  });
});
