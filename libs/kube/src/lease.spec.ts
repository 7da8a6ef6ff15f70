import { describe, expect, it } from '@jest/globals';
import { decideLease, leaseDurationSeconds, leaseRecordOf, leaseStateOf, nextLeaseSpec, type LeaseRecord } from './lease.js';

const t0 = new Date('2026-01-01T00:00:00.000Z');
const at = (seconds: number): Date => new Date(t0.getTime() + seconds * 1000);
const held = (holder: string, renewedAt: Date, durationSeconds = 15, transitions = 3): LeaseRecord => ({
  holder,
  acquireTime: t0,
  renewTime: renewedAt,
  durationSeconds,
  transitions,
});

describe('lease decisions', () => {
  it('renews its own lease', () => {
    expect(decideLease(held('a', t0), 'a', at(100))).toEqual({ action: 'renew' });
  });

  it('waits while another holder\'s lease is fresh, and takes over once it expired', () => {
    expect(decideLease(held('a', t0), 'b', at(14))).toEqual({ action: 'wait', holder: 'a', expiresAt: at(15) });
    expect(decideLease(held('a', t0), 'b', at(15))).toEqual({ action: 'take-over' });
  });

  it('takes over a released lease at once', () => {
    expect(decideLease(held('', at(10)), 'b', at(11))).toEqual({ action: 'take-over' });
  });

  it('bumps transitions (and so the fencing token) on take-over only', () => {
    const record = held('a', t0);
    const renewed = nextLeaseSpec(record, { action: 'renew' }, 'a', 15_000, at(5));
    expect(renewed?.leaseTransitions).toBe(3);
    expect(renewed?.acquireTime?.getTime()).toBe(t0.getTime());
    expect(renewed?.renewTime?.toISOString()).toBe('2026-01-01T00:00:05.000000Z');
    const taken = nextLeaseSpec(record, { action: 'take-over' }, 'b', 15_000, at(20));
    expect(taken).toMatchObject({ holderIdentity: 'b', leaseTransitions: 4, leaseDurationSeconds: 15 });
    expect(leaseStateOf(leaseRecordOf({ spec: taken }), 'b')).toEqual({ held: true, holder: 'b', fencingToken: 5n, expiresAt: at(35) });
    expect(leaseStateOf(leaseRecordOf({ spec: taken }), 'a').held).toBe(false);
  });

  it('creates with transitions 0 (fencing token 1)', () => {
    const spec = nextLeaseSpec(null, { action: 'take-over' }, 'a', 10_000, t0);
    expect(leaseStateOf(leaseRecordOf({ spec }), 'a')).toEqual({ held: true, holder: 'a', fencingToken: 1n, expiresAt: at(10) });
  });

  it('rounds the TTL up to whole seconds and rejects nonsense', () => {
    expect(leaseDurationSeconds(1)).toBe(1);
    expect(leaseDurationSeconds(15_001)).toBe(16);
    expect(() => leaseDurationSeconds(0)).toThrow(RangeError);
    expect(() => leaseDurationSeconds(Number.NaN)).toThrow(RangeError);
  });
});
