import { describe, expect, it } from '@jest/globals';
import { teamNamespaceRefusal, teamNamespaces } from './team-namespaces.js';

describe('team namespaces', () => {
  it("are the team's own name unless listed", () => {
    expect(teamNamespaces('vision', [])).toEqual(['vision']);
    expect(teamNamespaces('vision', ['cv-train', 'cv-eval'])).toEqual(['cv-train', 'cv-eval']);
  });

  it('refuse a workload elsewhere, saying which namespaces the team takes', () => {
    expect(teamNamespaceRefusal('vision', 'vision', [])).toBeNull();
    expect(teamNamespaceRefusal('vision', 'cv-eval', ['cv-train', 'cv-eval'])).toBeNull();
    expect(teamNamespaceRefusal('vision', 'nlp', [])).toBe(
      'team vision does not take workloads from namespace nlp (its namespaces: vision); an admin can add it with PATCH /v1/teams/vision {"namespaces": [...]} or qm team set vision --namespaces',
    );
    expect(teamNamespaceRefusal('vision', 'vision', ['cv-train'])).toContain('its namespaces: cv-train');
  });
});
