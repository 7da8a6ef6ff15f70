import { runSimulation, type SimHooks } from './engine.js';
import { computeMetrics, type Metrics } from './metrics.js';
import { policyOptions, type PolicyName } from './policies.js';
import type { Rejected, Scheduler, SimInput, SimResult } from './types.js';

export interface PolicyRun {
  policy: PolicyName;
  result: SimResult & { rejected: Rejected[] };
  metrics: Metrics;
  wallSeconds: number;
  /** CPU time of this process during the run (user + system): the figure to compare on a shared machine. */
  cpuSeconds: number;
}

/** Runs one policy on an input: the input's options with the policy's changes. */
export function simulatePolicy(input: SimInput, policy: PolicyName, scheduler: Scheduler, hooks: SimHooks = {}, seed = 1): PolicyRun {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const options = policyOptions(policy, input.config.options, seed);
  const result = runSimulation({ ...input, config: { ...input.config, options } }, scheduler, hooks);
  const metrics = computeMetrics(result, input.tenancy);
  const used = process.cpuUsage(cpu);
  return { policy, result, metrics, wallSeconds: (performance.now() - started) / 1000, cpuSeconds: (used.user + used.system) / 1e6 };
}
