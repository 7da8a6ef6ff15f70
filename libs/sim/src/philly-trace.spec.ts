import { describe, expect, it } from '@jest/globals';
import { parsePhillyCsv } from './philly-trace.js';
import { gangShape } from './validate.js';

const flavors = [
  { name: 'gpu', kind: 'nvidia-gpu' as const, resourceName: 'nvidia.com/gpu', relativeSpeed: 1, costPerHour: 1 },
  { name: 'fast', kind: 'nvidia-gpu' as const, resourceName: 'nvidia.com/gpu', relativeSpeed: 2, costPerHour: 3 },
];
const parse = (body: string) => parsePhillyCsv(`timestamp,duration,num_gpus,gpu_time,cluster\n${body}`, { source: 'p.csv', flavors });

describe('parsePhillyCsv', () => {
  it('turns rows into jobs: team = cluster, time 0 = earliest timestamp, rates = relative speeds', () => {
    const t = parse('2017-10-09 07:01:55,66.0,1,66.0,11cb48\n2017-10-09 07:00:00,10,16,160,6214e9\n\n');
    expect(t.rejected).toEqual([]);
    expect(t.epochMs).toBe(Date.UTC(2017, 9, 9, 7, 0, 0));
    expect(t.jobs).toEqual([
      expect.objectContaining({ id: 'philly-2', line: 2, team: '11cb48', submitSeconds: 115, replicas: 1, acceleratorsPerReplica: 1, work: 66, flavors: ['gpu', 'fast'], rates: { gpu: 1, fast: 2 } }),
      expect.objectContaining({ id: 'philly-3', line: 3, team: '6214e9', submitSeconds: 0, replicas: 2, acceleratorsPerReplica: 8 }),
    ]);
  });

  it('rejects bad rows with their line number and keeps the good ones', () => {
    const t = parse(
      [
        '2017-10-09 07:01:55,66.0,1,66.0,a1', // line 2 ok
        '2017-10-09 07:01:55,66.0,1,66.0', // 3
        'yesterday,66.0,1,66.0,a1', // 4
        '2017-10-09 07:01:55,-5,1,-5,a1', // 5
        '2017-10-09 07:01:55,0,1,0,a1', // 6
        '2017-10-09 07:01:55,abc,1,1,a1', // 7
        '2017-10-09 07:01:55,5,0,0,a1', // 8
        '2017-10-09 07:01:55,5,1.5,0,a1', // 9
        '2017-10-09 07:01:55,5,1,5,Bad_Team', // 10
      ].join('\n'),
    );
    expect(t.jobs.map((j) => j.line)).toEqual([2]);
    expect(t.rejected).toEqual([
      { line: 3, source: 'p.csv', reason: 'expected 5 comma-separated fields, found 4' },
      { line: 4, source: 'p.csv', reason: "timestamp 'yesterday' is not 'YYYY-MM-DD hh:mm:ss'" },
      { line: 5, source: 'p.csv', reason: 'duration -5 is negative' },
      { line: 6, source: 'p.csv', reason: 'duration 0 is zero' },
      { line: 7, source: 'p.csv', reason: "duration 'abc' is not a number" },
      { line: 8, source: 'p.csv', reason: "num_gpus '0' is not a positive integer" },
      { line: 9, source: 'p.csv', reason: "num_gpus '1.5' is not a positive integer" },
      { line: 10, source: 'p.csv', reason: "cluster 'Bad_Team' is not a valid team name (DNS label)" },
    ]);
  });

  it('throws on a file without the Philly header', () => {
    expect(() => parsePhillyCsv('a,b,c\n1,2,3\n', { source: 'x.csv', flavors })).toThrow("x.csv:1: expected the header 'timestamp,duration,num_gpus,gpu_time,cluster', found 'a,b,c'");
  });
});

describe('gangShape', () => {
  it('maps ≤ 8 to one replica and larger gangs to replicas of 8 (or of the largest divisor ≤ 8)', () => {
    expect(gangShape(1)).toEqual({ replicas: 1, acceleratorsPerReplica: 1 });
    expect(gangShape(8)).toEqual({ replicas: 1, acceleratorsPerReplica: 8 });
    expect(gangShape(16)).toEqual({ replicas: 2, acceleratorsPerReplica: 8 });
    expect(gangShape(128)).toEqual({ replicas: 16, acceleratorsPerReplica: 8 });
    expect(gangShape(12)).toEqual({ replicas: 2, acceleratorsPerReplica: 6 });
    expect(gangShape(20)).toEqual({ replicas: 4, acceleratorsPerReplica: 5 });
  });
});
