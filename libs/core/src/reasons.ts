/**
 * Why a job is still pending, in words an ML researcher can act on. Every message names the team,
 * the flavor and the figures; `explain` picks the most useful failure across the flavors tried and
 * appends the reserved start when the job has one.
 */
import { formatAmount } from './amount.js';
import type { Accelerators } from './quantity.js';
import type { GangFit } from './gang-placer.js';
import type { JobRole, JobSpec, PendingCode } from './model.js';
import type { CappedResource, QuotaEntry } from './quota.js';
import { cohortIdle } from './quota.js';
import { describeGrouping, describeSelector, splitGrouping } from './topology.js';
import { isoTime } from './iso-time.js';

/** Why a job could not start on one flavor. */
export interface FlavorFailure {
  flavor: string;
  code: PendingCode;
  message: string;
}

export const jobLabel = (job: Pick<JobSpec, 'team' | 'name'>): string => `${job.team}/${job.name}`;

export function noQuotaMessage(team: string, flavor: string): string {
  return `team ${team} has no quota for ${flavor}`;
}

export function quotaMessage(code: 'QUOTA_EXCEEDED' | 'COHORT_EXHAUSTED', e: QuotaEntry, need: Accelerators): string {
  const base = `team ${e.team} uses ${e.used} of ${e.nominal} nominal ${e.flavor}`;
  if (code === 'COHORT_EXHAUSTED') {
    return `${base}; cohort ${e.pool?.cohort ?? '-'} has ${cohortIdle(e)} idle; needs ${need}`;
  }
  const limit = e.pool === null ? ' (no cohort to borrow from)' : ` and may borrow ${formatAmount(e.borrowingLimit)}`;
  return `${base}${limit}; needs ${need} more`;
}

/** A job that may not be preempted waits for its team's nominal quota: it never borrows. */
export function nonPreemptibleQuotaMessage(e: QuotaEntry, need: Accelerators): string {
  return `team ${e.team} uses ${e.used} of ${e.nominal} nominal ${e.flavor}; a job that may not be preempted runs only within its team's nominal quota (it never borrows, so what the team lends can always be reclaimed); needs ${need} more`;
}

export function nonPreemptibleCeilingMessage(e: QuotaEntry, need: Accelerators): string {
  return `needs ${need} ${e.flavor} but a job that may not be preempted runs only within team ${e.team}'s nominal quota of ${e.nominal} (it never borrows); submit it preemptible to borrow`;
}

export function ceilingMessage(e: QuotaEntry, need: Accelerators, ceiling: Accelerators): string {
  return `needs ${need} ${e.flavor} but team ${e.team} can never hold more than ${formatAmount(ceiling)} (nominal ${e.nominal}, borrowing limit ${formatAmount(e.borrowingLimit)})`;
}

const capUnit = (r: CappedResource, n: number): string => (r === 'cpu' ? `${formatAmount(n)}m CPU` : `${formatAmount(n)} MiB memory`);

/** The team's CPU or memory cap on the flavor leaves too little now (QUOTA_EXCEEDED). */
export function capQuotaMessage(e: QuotaEntry, r: CappedResource, need: number): string {
  const [used, limit] = r === 'cpu' ? [e.cpuUsed, e.cpuMillisLimit] : [e.memoryUsed, e.memoryMiBLimit];
  return `team ${e.team}'s jobs hold ${capUnit(r, used)} of its ${capUnit(r, limit)} limit on ${e.flavor} nodes; needs ${capUnit(r, need)} more`;
}

/** The job asks more CPU or memory than the team's cap on the flavor allows at all (UNSATISFIABLE). */
export function capCeilingMessage(e: QuotaEntry, r: CappedResource, need: number): string {
  const limit = r === 'cpu' ? e.cpuMillisLimit : e.memoryMiBLimit;
  return `needs ${capUnit(r, need)} on ${e.flavor} nodes but team ${e.team}'s ${r === 'cpu' ? 'CPU' : 'memory'} limit there is ${capUnit(r, limit)}`;
}

export function fleetMessage(flavor: string, replicas: number, perReplica: number, largestNode: number, total: number): string {
  if (perReplica > largestNode) {
    return `needs ${perReplica} ${flavor} per replica; the largest schedulable ${flavor} node has ${largestNode}`;
  }
  return `needs ${replicas * perReplica} ${flavor}; all schedulable ${flavor} nodes together have ${total}`;
}

export function groupTooSmallMessage(flavor: string, need: number, grouping: string, largest: number, labelsHint = ''): string {
  const level = describeGrouping(grouping);
  if (largest === 0) {
    const { base, selector } = splitGrouping(grouping);
    const labelled = selector.length === 0 ? '' : ` labelled ${describeSelector(selector)}`;
    return `needs ${need} ${flavor} in one ${level}; no schedulable ${flavor} node${labelled} has a ${describeGrouping(base)}${labelsHint}`;
  }
  return `needs ${need} ${flavor} in one ${level}; the largest ${level} has ${largest}`;
}

/** The job's node selector leaves too few of the flavor's nodes (`matching`: their allocatable accelerators). */
export function selectorMessage(flavor: string, need: number, selector: readonly (readonly [string, string])[], matching: number): string {
  const labels = describeSelector(selector);
  if (matching === 0) return `needs ${need} ${flavor} on nodes labelled ${labels} (its nodeSelector); no schedulable ${flavor} node carries ${selector.length === 1 ? 'that label' : 'those labels'}`;
  return `needs ${need} ${flavor} on nodes labelled ${labels} (its nodeSelector); the schedulable ${flavor} nodes labelled so have ${matching} in all`;
}

export function capacityMessage(flavor: string, replicas: number, perReplica: number, fit: GangFit & { ok: false }, totalFree: number, labelsHint = ''): string {
  if (fit.grouping === 'none') {
    return `needs ${replicas} × ${perReplica} free ${flavor}; room for ${fit.best} now (${totalFree} ${flavor} free in total)`;
  }
  const { base, selector } = splitGrouping(fit.grouping);
  if (base === 'none') return `needs ${replicas} × ${perReplica} free ${flavor} on nodes labelled ${describeSelector(selector)}; room for ${fit.best} there now`;
  const level = describeGrouping(fit.grouping);
  if (fit.groups === 0) return `needs ${replicas} × ${perReplica} ${flavor} in one ${level}; no schedulable ${flavor} node has a ${level}${labelsHint}`;
  return `needs ${replicas} × ${perReplica} free ${flavor} in one ${level}; best ${level} has room for ${fit.best}`;
}

/** A multi-role gang's role that found no room, naming the role, its shape and the resource that is short. */
export function roleCapacityMessage(flavor: string, failed: { role: JobRole; count: number; fit: GangFit & { ok: false }; short: string }, totalFree: number): string {
  const r = failed.role;
  const shape = `${failed.count} × (${r.acceleratorsPerReplica} ${flavor}, ${r.cpuMillisPerReplica}m CPU, ${r.memoryMiBPerReplica} MiB)`;
  const where = failed.fit.grouping === 'none' || r.acceleratorsPerReplica === 0 ? '' : ` in one ${describeGrouping(failed.fit.grouping)}`;
  return `role ${r.name} needs ${shape}${where}; room for ${failed.fit.best} now: short of ${failed.short}${failed.short === 'accelerators' ? ` (${totalFree} ${flavor} free in total)` : ''}`;
}

/**
 * Another job as a message to `reader`'s team may name it: a job of the same team by team/name, one of another
 * team only as "a job of team X" — its name is that team's data.
 */
export function jobSeenBy(other: JobSpec, readerTeam: string): string {
  return other.team === readerTeam ? jobLabel(other) : `a job of team ${other.team}`;
}

export function reservationBlockMessage(job: JobSpec, holder: JobSpec, flavor: string, startAt: number): string {
  return `fits now but would delay the reservation of ${jobSeenBy(holder, job.team)} (${flavor} from ${isoTime(startAt)})`;
}

export function fifoMessage(job: JobSpec, blocker: JobSpec, flavor: string): string {
  return `waits behind ${jobSeenBy(blocker, job.team)} on ${flavor} (strict FIFO: backfill is off)`;
}

export function admissionLimitMessage(team: string, limit: number): string {
  return `team ${team} reached its limit of ${limit} admission${limit === 1 ? '' : 's'} this cycle`;
}

/** An instant for a message: ISO 8601, or `an unknown time` beyond what a Date can hold. */
const when = (ms: number): string => (Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? isoTime(ms) : 'an unknown time');
const pct = (x: number): string => `${Math.round(x * 100)}%`;

/** Why a job runs on `flavor` under relative-speed placement (relative-placement.ts). */
export function placedByValueMessage(
  flavor: string,
  plan: { home: string; speed: ReadonlyMap<string, number>; order: readonly string[] },
  market: { price(flavor: string): number; contended: boolean },
): string {
  const s = plan.speed.get(flavor) ?? 1;
  if (!market.contended) return s >= 1 ? `on ${flavor}, its fastest flavor` : `on ${flavor} at ${pct(s)} of its best speed`;
  const prices = plan.order
    .filter((f) => plan.speed.has(f))
    .map((f) => `${f} ${market.price(f).toFixed(2)}`)
    .join(', ');
  const why = flavor === plan.home ? 'where its relative advantage is largest' : `all but as good for it as ${plan.home}`;
  return `on ${flavor} at ${pct(s)} of its best speed: ${why} at this cycle's prices (${prices})`;
}

export function soonerMessage(flavor: string, home: string, here: number, there: number): string {
  return `on ${flavor}: expected to finish at ${when(here)}, before ${when(there)} waiting for ${home}`;
}

export function declinedMessage(home: string, here: number, there: number, cost?: { othersDelay: number; others: number; extraAcceleratorMs: number }): string {
  if (cost !== undefined && here < there) {
    const hours = cost.extraAcceleratorMs / 3_600_000;
    const held = hours >= 10 ? Math.round(hours) : Math.round(hours * 10) / 10;
    return (
      `fits now and would finish at ${when(here)}, before ${when(there)} waiting for ${home}, but its slower run would hold ` +
      `${held} more accelerator-hours, ~${duration(cost.othersDelay)} of delay for the ${cost.others} other waiting jobs in all; waits for ${home}`
    );
  }
  return `fits now, but would finish at ${when(here)}; waits for ${home}, expected to finish by ${when(there)}`;
}

const duration = (ms: number): string => {
  const h = ms / 3_600_000;
  return h >= 1 ? `${h >= 10 ? Math.round(h) : Math.round(h * 10) / 10} h` : `${Math.max(1, Math.round(ms / 60_000))} min`;
};

/** Why a running job moved (moves.ts). */
export function moveMessage(from: string, to: string, earlierMs: number, lostAcceleratorSeconds: number): string {
  const lost = lostAcceleratorSeconds >= 180 ? `; redoes ${(lostAcceleratorSeconds / 3600).toFixed(1)} accelerator-hours since its last checkpoint` : '';
  return `moved from ${from} to ${to}: expected to finish ${duration(earlierMs)} earlier${lost}`;
}

/** Most actionable first: what is closest to starting. */
const RANK: Record<PendingCode, number> = {
  BLOCKED_BY_RESERVATION: 0,
  INSUFFICIENT_CAPACITY: 1,
  TOPOLOGY_UNSATISFIABLE: 1,
  COHORT_EXHAUSTED: 2,
  QUOTA_EXCEEDED: 3,
  ADMISSION_LIMIT: 4,
  UNSATISFIABLE: 5,
  NO_QUOTA: 6,
  INVALID: 7,
  BUDGET_EXHAUSTED: 8,
  HELD: 9,
};

/** The code and message for a job that failed on every flavor it tried. */
export function explain(
  failures: readonly FlavorFailure[],
  reservation: { flavor: string; startAt: number; nodes: number } | undefined,
): { code: PendingCode; message: string } {
  let primary = failures[0];
  for (const f of failures) if (primary === undefined || RANK[f.code] < RANK[primary.code]) primary = f;
  if (primary === undefined) return { code: 'INVALID', message: 'no acceptable flavor to try' };
  let message = primary.message;
  for (const f of failures) if (f !== primary) message += `; on ${f.flavor}: ${f.message}`;
  if (reservation !== undefined) {
    message += `; reserved to start at ${isoTime(reservation.startAt)} on ${reservation.nodes} ${reservation.flavor} node${reservation.nodes === 1 ? '' : 's'}`;
  }
  return { code: primary.code, message };
}
