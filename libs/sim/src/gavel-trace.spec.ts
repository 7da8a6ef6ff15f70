import { describe, expect, it } from '@jest/globals';
import { gavelThroughput, parseGavelThroughputs, parseGavelTrace } from './gavel-trace.js';

const tp = parseGavelThroughputs(
  JSON.stringify({
    v100: { "('ResNet-18 (batch size 16)', 1)": { null: 10 }, "('ResNet-18 (batch size 16)', 8)": { null: 64 }, "('ResNet-50 (batch size 128)', 2)": { null: 4 } },
    p100: { "('ResNet-18 (batch size 16)', 1)": { null: 5 }, "('ResNet-18 (batch size 16)', 8)": { null: 32 }, "('ResNet-50 (batch size 128)', 2)": { null: 2 } },
    k80: { "('ResNet-18 (batch size 16)', 1)": { null: 20 }, "('ResNet-18 (batch size 16)', 8)": { null: 8 }, "('ResNet-50 (batch size 128)', 2)": { null: 0 } },
  }),
  't.json',
);

describe('gavelThroughput', () => {
  it('uses the measured figure, extrapolates linearly above the largest measured scale, 0 = cannot run', () => {
    expect(gavelThroughput(tp, 'v100', 'ResNet-18 (batch size 16)', 8)).toBe(64);
    expect(gavelThroughput(tp, 'v100', 'ResNet-18 (batch size 16)', 32)).toBe(256);
    expect(gavelThroughput(tp, 'v100', 'ResNet-18 (batch size 16)', 4)).toBe(40);
    expect(gavelThroughput(tp, 'k80', 'ResNet-50 (batch size 128)', 2)).toBe(0);
    expect(gavelThroughput(tp, 'v100', 'Unknown', 1)).toBeUndefined();
  });
});

describe('parseGavelTrace', () => {
  const row = (type: string, steps: string, arrival: string, scale: string): string => [type, 'cmd', '-n', '1', steps, arrival, scale].join('\t');

  it('makes jobs whose rates differ by accelerator type, fastest flavor first, without types where they cannot run', () => {
    const t = parseGavelTrace([row('ResNet-18 (batch size 16)', '1000', '0.000000', '1'), row('ResNet-50 (batch size 128)', '50', '7.5', '2')].join('\n'), { source: 'vc.trace', team: 'vc', throughputs: tp });
    expect(t.rejected).toEqual([]);
    expect(t.jobs[0]).toMatchObject({ id: 'vc-1', team: 'vc', submitSeconds: 0, work: 1000, flavors: ['k80', 'v100', 'p100'], rates: { v100: 10, p100: 5, k80: 20 }, replicas: 1, acceleratorsPerReplica: 1 });
    expect(t.jobs[1]).toMatchObject({ id: 'vc-2', submitSeconds: 7.5, flavors: ['v100', 'p100'], rates: { v100: 4, p100: 2 }, acceleratorsPerReplica: 2 });
  });

  it('rejects malformed rows and unknown job types with their line numbers', () => {
    const t = parseGavelTrace(
      [row('ResNet-18 (batch size 16)', '-3', '0', '1'), 'only\ttwo', row('Mystery', '10', '0', '1'), row('ResNet-18 (batch size 16)', '10', '-1', '1'), row('ResNet-18 (batch size 16)', '10', '0', 'x')].join('\n'),
      { source: 'vc.trace', team: 'vc', throughputs: tp },
    );
    expect(t.jobs).toEqual([]);
    expect(t.rejected.map((r) => `${r.line}: ${r.reason}`)).toEqual([
      "1: total_steps '-3' is not a positive integer",
      '2: expected 7 tab-separated fields, found 2',
      "3: unknown job type 'Mystery' (not in the throughputs file)",
      "4: arrival_time_s '-1' is not a non-negative number",
      "5: scale_factor 'x' is not a positive integer",
    ]);
  });

  it('refuses a throughputs file that is not JSON or lacks an accelerator type', () => {
    expect(() => parseGavelThroughputs('{', 'bad.json')).toThrow(/^bad\.json: not JSON/);
    expect(() => parseGavelThroughputs('{"v100":{}}', 'bad.json')).toThrow("bad.json: no throughputs for accelerator type 'p100'");
  });
});
