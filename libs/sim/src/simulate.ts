import { runSimulation, type SimHooks } from './engine.js';
import { computeMetrics, type Metrics } from './metrics.js';
import { policyOptions, type PolicyName } from './policies.js';
import type { Rejected, Scheduler, SimInput, SimResult } from './types.js';

export interface PolicyRun {
  policy: PolicyName;
  result: SimResult & { rejected: Rejected[] };
  metrics: Metrics;
  wallSeconds: number;
}

/** Runs one policy on an input: the input's options with the policy's changes. */
export function simulatePolicy(input: SimInput, policy: PolicyName, scheduler: Scheduler, hooks: SimHooks = {}, seed = 1): PolicyRun {
  const started = performance.now();
  const options = policyOptions(policy, input.config.options, seed);
  const result = runSimulation({ ...input, config: { ...input.config, options } }, scheduler, hooks);
  const metrics = computeMetrics(result, input.tenancy);
  return { policy, result, metrics, wallSeconds: (performance.now() - started) / 1000 };
}
