import { describe, expect, it } from '@jest/globals';
import { parsePhillyCsv } from './philly-trace.js';
import { traceWindow } from './trace-window.js';

const flavors = [{ name: 'gpu', kind: 'nvidia-gpu' as const, resourceName: 'nvidia.com/gpu', relativeSpeed: 1, costPerHour: 1 }];

describe('traceWindow', () => {
  it('keeps the jobs submitted in [from, to) and starts virtual time at the first of them', () => {
    const trace = parsePhillyCsv(
      ['timestamp,duration,num_gpus,gpu_time,cluster', '2017-10-31 23:59:59,10,1,10,a', '2017-11-01 00:00:00,20,2,40,b', '2017-11-02 06:00:00,30,1,30,a', '2017-12-01 00:00:00,40,1,40,a'].join('\n'),
      { source: 'p.csv', flavors },
    );
    const nov = traceWindow(trace, Date.UTC(2017, 10, 1), Date.UTC(2017, 11, 1));
    expect(nov.epochMs).toBe(Date.UTC(2017, 10, 1));
    expect(nov.jobs.map((j) => [j.id, j.submitSeconds, j.work])).toEqual([
      ['philly-3', 0, 20],
      ['philly-4', 30 * 3600, 30],
    ]);
    expect(traceWindow(trace, Date.UTC(2018, 0, 1), Date.UTC(2018, 1, 1)).jobs).toEqual([]);
  });
});
