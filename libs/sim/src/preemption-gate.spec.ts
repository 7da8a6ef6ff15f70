import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { DEFAULT_OPTIONS, runCycle } from '#core';
import { buildCluster } from './cluster-file.js';
import { PHILLY_FLAVOR, parseVcNodes } from './load.js';
import { parsePhillyCsv } from './philly-trace.js';
import { preemptionGate } from './preemption-gate.js';
import { simulatePolicy } from './simulate.js';
import { deriveTenancy } from './tenancy-file.js';
import type { SimInput } from './types.js';

/** Nodes per Philly virtual cluster, as Helios simulates them (their quotas are in proportion). */
const VC_NODES = `vc,node num
6214e9,64
7f04ca,32
11cb48,16
b436b2,64
ee9e8c,64
e13805,16
6c71a0,32
2869ce,16
ed69ec,8
103959,8
0e4a51,32
`;

/**
 * The short contended replay of `npm test` (bench:sim runs the long ones): the 5,507 Philly jobs of 4–5
 * October 2017 on 70 nodes × 8 GPUs, 15 virtual clusters as teams of one cohort with quotas in proportion
 * to their nodes, cycles every 10 s, as `philly-contended` runs. Deterministic: no figure depends on time.
 */
function contendedInput(): SimInput {
  const text = gunzipSync(readFileSync(fileURLToPath(new URL('./testdata/philly-2017-10-04-05.csv.gz', import.meta.url)))).toString('utf8');
  const cluster = buildCluster([PHILLY_FLAVOR], [{ flavor: PHILLY_FLAVOR.name, count: 70, acceleratorsPerNode: 8 }]);
  const trace = parsePhillyCsv(text, { source: 'philly-2017-10-04-05.csv', flavors: cluster.flavors });
  const tenancy = deriveTenancy(
    trace.jobs.map((j) => j.team),
    parseVcNodes(VC_NODES, 'philly_vc_nodes.csv'),
    cluster,
  );
  return {
    trace,
    cluster,
    tenancy,
    epochMs: trace.epochMs,
    config: { cycleIntervalSeconds: 10, checkpointIntervalSeconds: 0, checkpointGraceSeconds: 0, seriesBucketSeconds: 0, options: { ...DEFAULT_OPTIONS } },
  };
}

describe('the quality gate on preemption (a contended Philly replay)', () => {
  it('preemption throws away at most 2 % of the demanded GPU-hours and makes jobs wait no longer than not preempting', () => {
    const input = contendedInput();
    const full = simulatePolicy(input, 'full', runCycle).metrics;
    const none = simulatePolicy(input, 'no-preemption', runCycle).metrics;
    const gate = preemptionGate(full, none);
    // The replay does contend: reclaims happen, and jobs wait without them.
    expect(gate.full.preemptions).toBeGreaterThan(20);
    expect(gate.noPreemption.meanWaitHours).toBeGreaterThan(0.05);
    expect(gate.failed).toEqual([]);
  });
});
