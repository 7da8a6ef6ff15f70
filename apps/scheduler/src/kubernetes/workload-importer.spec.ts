import { describe, expect, it } from '@jest/globals';
import { BIND_HANDOFF_MS, rejoins } from './workload-importer.js';

describe('which gangs an import pass binds', () => {
  const now = new Date('2026-12-02T16:00:00Z');
  const admitted = (msAgo: number): string => String(now.getTime() - msAgo);

  it('not a gang its bind side effect is binding; one it has been at for BIND_HANDOFF_MS, and a running gang’s new pods', () => {
    expect(rejoins({ state: 'BINDING', admission: admitted(100) }, now)).toBe(false);
    expect(rejoins({ state: 'BINDING', admission: admitted(BIND_HANDOFF_MS) }, now)).toBe(true);
    expect(rejoins({ state: 'RUNNING', admission: admitted(100) }, now)).toBe(true);
    for (const state of ['PENDING', 'ADMITTED'] as const) expect(rejoins({ state, admission: admitted(60_000) }, now)).toBe(false);
  });
});
