import { describe, expect, it } from '@jest/globals';
import { parseJob } from './job-file.js';

describe('job files', () => {
  it('reads YAML and JSON in the API shape', () => {
    expect(parseJob('name: a\nreplicas: 2\nflavors: [h100-80gb]\n', 'job.yaml')).toEqual({ name: 'a', replicas: 2, flavors: ['h100-80gb'] });
    expect(parseJob('{"name": "a", "replicas": 2}', 'job.json')).toEqual({ name: 'a', replicas: 2 });
    expect(parseJob('{"name": "a"}', 'stdin')).toEqual({ name: 'a' });
    expect(parseJob('---\nname: a\n', 'job.yaml')).toEqual({ name: 'a' });
  });

  it.each([
    ['name: a\nname: b\n', 'job.yaml', 'job.yaml: line 2, column 1: Map keys must be unique'],
    ['name: [a\n', 'job.yaml', /^job\.yaml: line \d, column \d: /],
    ['{"a": 1,}', 'job.json', 'job.json: line 1, column 9: Expected double-quoted property name'],
    ['{\n  "a": 1\n  "b": 2\n}', 'job.json', /^job\.json: line 3, column 3: /],
    ['- a\n', 'job.yaml', 'job.yaml: expected a job (a mapping with name, team, replicas, …), got a list'],
    ['just a string', 'job.yaml', 'job.yaml: expected a job (a mapping with name, team, replicas, …), got a string'],
    ['a: 1\n---\nb: 2\n', 'job.yaml', 'job.yaml holds 2 documents; qm submit takes one job per file'],
    ['# only a comment\n', 'job.yaml', 'job.yaml is empty: expected a job in YAML or JSON (see qm submit --help)'],
    ['a: &x [*x]\n', 'job.yaml', 'job.yaml: a YAML alias refers to itself (the job must be plain data)'],
  ])('refuses %j in one line', (text, label, message) => {
    let error: Error | undefined;
    try {
      parseJob(text, label);
    } catch (e) {
      error = e as Error;
    }
    expect(error).toBeDefined();
    expect(error!.message).not.toContain('\n');
    if (typeof message === 'string') expect(error!.message).toBe(message);
    else expect(error!.message).toMatch(message);
  });
});
