import { describe, expect, it } from '@jest/globals';
import { jobsNamespaceRefusal, namespaceTeam, ownNamespaceConflicts, podsNamespace, teamNamespaceLabels, teamNamespaceRefusal, teamNamespaces } from './team-namespaces.js';

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

  it("put a REST job's pods in the team's first namespace", () => {
    expect(podsNamespace('vision', [])).toBe('vision');
    expect(podsNamespace('vision', ['cv-train', 'cv-eval'])).toBe('cv-train');
  });

  it("refuse Quartermaster's own namespace, and a missing one unless Quartermaster creates it", () => {
    const facts = { ownNamespace: 'quartermaster', createNamespaces: false, exists: true };
    expect(jobsNamespaceRefusal('vision', facts)).toBeNull();
    expect(jobsNamespaceRefusal('quartermaster', facts)).toMatch(/^namespace quartermaster is Quartermaster's own/);
    expect(jobsNamespaceRefusal('quartermaster', { ...facts, createNamespaces: true })).toMatch(/Quartermaster's own/);
    expect(jobsNamespaceRefusal('vision', { ...facts, exists: false })).toMatch(/^namespace vision does not exist in the cluster; .*QM_KUBE_CREATE_NAMESPACES=true/);
    expect(jobsNamespaceRefusal('vision', { ...facts, exists: false, createNamespaces: true })).toBeNull();
    expect(jobsNamespaceRefusal('quartermaster', { ...facts, ownNamespace: null })).toBeNull();
  });

  it("find every jobs namespace that is Quartermaster's own", () => {
    const teams = new Map([['vision', []], ['ops', ['tools', 'quartermaster']], ['quartermaster', []]]);
    expect(ownNamespaceConflicts('quartermaster', 'default', teams)).toEqual([
      "team ops's namespaces include quartermaster",
      "team quartermaster's namespaces include quartermaster",
    ]);
    expect(ownNamespaceConflicts('quartermaster', 'quartermaster', new Map())).toEqual(['QM_KUBE_NAMESPACE is quartermaster']);
    expect(ownNamespaceConflicts('qm-system', 'default', teams)).toEqual([]);
  });

  it('label a created namespace with its team and Pod Security level', () => {
    expect(teamNamespaceLabels('vision', 'restricted')).toMatchObject({
      'quartermaster.io/team': 'vision',
      'pod-security.kubernetes.io/enforce': 'restricted',
      'pod-security.kubernetes.io/warn': 'restricted',
    });
    expect(teamNamespaceLabels('vision', 'baseline')['pod-security.kubernetes.io/enforce']).toBe('baseline');
  });

  it("charge an unannotated accelerator pod to its namespace's one team, or to the team its label names there", () => {
    const teams = new Map<string, string[]>([['vision', []], ['nlp', ['nlp', 'shared']], ['speech', ['shared']]]);
    expect(namespaceTeam('vision', teams, undefined)).toEqual({ team: 'vision' });
    expect(namespaceTeam('nlp', teams, undefined)).toEqual({ team: 'nlp' });
    expect(namespaceTeam('sandbox', teams, undefined)).toEqual({ refusal: expect.stringMatching(/^namespace sandbox belongs to no team/) });
    expect(namespaceTeam('shared', teams, undefined)).toEqual({ refusal: expect.stringContaining('belongs to several teams (nlp, speech)') });
    expect(namespaceTeam('shared', teams, 'speech')).toEqual({ team: 'speech' });
    expect(namespaceTeam('vision', teams, 'nlp')).toEqual({ refusal: expect.stringContaining('team nlp does not take workloads from namespace vision') });
    expect(namespaceTeam('vision', teams, 'ghost')).toEqual({ refusal: 'quartermaster.io/team: unknown team ghost' });
  });
});
