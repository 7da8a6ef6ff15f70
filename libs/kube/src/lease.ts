import { V1MicroTime, type V1Lease } from '@kubernetes/client-node';

/**
 * Leader election over a coordination.k8s.io/v1 Lease, the pure part: what a Lease says and what a
 * candidate should do about it. KubeCluster does the reads and writes (optimistic concurrency on
 * resourceVersion: of two candidates writing the same Lease, one gets 409 and loses).
 *
 * Expiry is judged from the Lease's renewTime + leaseDurationSeconds against the caller's clock, so
 * clocks must be roughly in sync (NTP); the fencing token carried with every commit (checked in
 * Postgres) is what makes a late ex-leader harmless.
 */

/** Same shape as libs/scheduling's LeaseState, so a Kubernetes lease can back its LeaderElector. */
export interface LeaseState {
  /** True when `holder` (the caller) holds the lease after the call. */
  held: boolean;
  /** The holder after the call ('' when nobody holds it). */
  holder: string;
  /** Strictly increases every time the lease changes hands: leaseTransitions + 1. */
  fencingToken: bigint;
  expiresAt: Date;
}

export interface LeaseRecord {
  holder: string;
  acquireTime: Date | null;
  renewTime: Date | null;
  durationSeconds: number;
  transitions: number;
}

export type LeaseDecision =
  /** The caller holds it: renew (renewTime = now). */
  | { action: 'renew' }
  /** Free or expired: take it over (new acquireTime, transitions + 1). */
  | { action: 'take-over' }
  /** Someone else holds it until `expiresAt`. */
  | { action: 'wait'; holder: string; expiresAt: Date };

function toDate(value: Date | string | undefined | null): Date | null {
  if (value === undefined || value === null) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}

export function leaseRecordOf(lease: V1Lease): LeaseRecord {
  const spec = lease.spec ?? {};
  return {
    holder: spec.holderIdentity ?? '',
    acquireTime: toDate(spec.acquireTime),
    renewTime: toDate(spec.renewTime),
    durationSeconds: spec.leaseDurationSeconds ?? 0,
    transitions: spec.leaseTransitions ?? 0,
  };
}

export function leaseExpiresAt(record: LeaseRecord): Date {
  const from = record.renewTime ?? record.acquireTime ?? new Date(0);
  return new Date(from.getTime() + record.durationSeconds * 1000);
}

export function decideLease(record: LeaseRecord, holder: string, now: Date): LeaseDecision {
  if (record.holder === holder) return { action: 'renew' };
  if (record.holder === '') return { action: 'take-over' };
  const expiresAt = leaseExpiresAt(record);
  if (expiresAt.getTime() <= now.getTime()) return { action: 'take-over' };
  return { action: 'wait', holder: record.holder, expiresAt };
}

/** Lease durations are whole seconds: ttlMs rounds up, at least 1 s. */
export function leaseDurationSeconds(ttlMs: number): number {
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw new RangeError(`lease ttlMs must be > 0, got ${ttlMs}`);
  return Math.max(1, Math.ceil(ttlMs / 1000));
}

/** The spec to write for `decision` (renew or take-over) by `holder` at `now`. */
export function nextLeaseSpec(record: LeaseRecord | null, decision: LeaseDecision, holder: string, ttlMs: number, now: Date): V1Lease['spec'] {
  const micro = new V1MicroTime(now.getTime());
  const durationSeconds = leaseDurationSeconds(ttlMs);
  if (record === null) {
    return { holderIdentity: holder, acquireTime: micro, renewTime: micro, leaseDurationSeconds: durationSeconds, leaseTransitions: 0 };
  }
  if (decision.action === 'renew') {
    return {
      holderIdentity: holder,
      acquireTime: new V1MicroTime((record.acquireTime ?? now).getTime()),
      renewTime: micro,
      leaseDurationSeconds: durationSeconds,
      leaseTransitions: record.transitions,
    };
  }
  return {
    holderIdentity: holder,
    acquireTime: micro,
    renewTime: micro,
    leaseDurationSeconds: durationSeconds,
    leaseTransitions: record.transitions + 1,
  };
}

export function leaseStateOf(record: LeaseRecord, caller: string): LeaseState {
  return {
    held: record.holder !== '' && record.holder === caller,
    holder: record.holder,
    fencingToken: BigInt(record.transitions) + 1n,
    expiresAt: leaseExpiresAt(record),
  };
}
