// The only public door of libs/core. Pure TypeScript: no framework, no I/O, no clock.
export * from './model.js';
export * from './topology-labels.js';
export * from './lifecycle.js';
export * from './invariants.js';
export { runCycle } from './cycle.js';
export { envelopeOf, isMultiRole, maxAccelerators, minAccelerators, rolesOf, rolesProblem } from './roles.js';
export {
  checkBudgetedCycle,
  planBudgetStops,
  runBudgetedCycle,
  withoutStopped,
  type BudgetStop,
  type BudgetStopRule,
  type BudgetedCycleResult,
  type BudgetedSnapshot,
} from './budget-block.js';
export { DEFAULT_MOVE_OPTIONS, resolveMoveOptions } from './moves.js';
export { DEFAULT_SLOWER_FLAVOR_DELAY_WEIGHT, slowerFlavorDelayWeight } from './relative-placement.js';
export { teamUsage, usageInputsOf, type TeamFlavorUsage, type UsageInputs } from './usage.js';
export {
  type Amount,
  UNLIMITED,
  addAmount,
  formatAmount,
  fromLimit,
  isQuantity,
  isUnlimited,
  minAmount,
  replicasWithin,
  subAmount,
} from './amount.js';
export type { Accelerators, CpuMillis, MemoryMiB, Quantity, Resources, Unit } from './quantity.js';
export { QuotaBook, type QuotaEntry, borrowedOf, cohortIdle, maxAddable, quotaCeiling } from './quota.js';
export { compareWithinTeam } from './ordering.js';
export { effectiveSpeed, flavorOrder, seededRandom } from './flavor-selection.js';
export { compareCandidates, reclaimAllows, withinTeamAllows, RECENT_PREEMPTION_SECONDS } from './preemptor.js';
export {
  allowedPriorityClasses,
  choosePriorityClass,
  priorityCeiling,
  type PriorityCeiling,
  type PriorityClassChoiceOptions,
  type PriorityClassDecision,
  type PriorityClassOption,
  type TeamPriorityClasses,
} from './priority-class-choice.js';
export { ANY as POD_POLICY_ANY, EMPTY_POD_POLICY, POD_POLICY_FIELDS, podPolicyRefusals, type PodPolicy, type PodPolicyRefusal, type PolicedTemplate } from './pod-policy.js';
export {
  jobsNamespaceRefusal,
  namespaceTeam,
  ownNamespaceConflicts,
  ownNamespaceRefusal,
  podsNamespace,
  POD_SECURITY_ENFORCE_LABEL,
  POD_SECURITY_LEVELS,
  teamNamespaceLabels,
  teamNamespaceRefusal,
  teamNamespaces,
  type JobsNamespaceFacts,
  type PodSecurityLevel,
} from './team-namespaces.js';
