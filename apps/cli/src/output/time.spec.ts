import { describe, expect, it } from '@jest/globals';
import { durationWords, localDateTime, localTime, startsIn } from './time.js';

const T = Date.UTC(2026, 10, 30, 12, 22, 0);

describe('durations in words', () => {
  it.each([
    [0, '0 s'],
    [999, '0 s'],
    [45_000, '45 s'],
    [60_000, '1 min'],
    [90_000, '1 min 30 s'],
    [2 * 3600_000, '2 h'],
    [2 * 3600_000 + 10 * 60_000 + 59_000, '2 h 10 min'],
    [3 * 86_400_000 + 4 * 3600_000 + 5 * 60_000, '3 d 4 h'],
    [-5000, '0 s'],
  ])('%d ms → %s', (ms, words) => {
    expect(durationWords(ms)).toBe(words);
  });
});

describe('local times with the zone', () => {
  it('shows the clock alone on the same local day, with the date otherwise', () => {
    expect(localTime(T + 2 * 3600_000 + 10 * 60_000, T, { timeZone: 'UTC' })).toBe('14:32 UTC');
    expect(localTime(T + 86_400_000, T, { timeZone: 'UTC' })).toBe('2026-12-01 12:22 UTC');
    expect(localTime(T, T, { timeZone: 'UTC', seconds: true })).toBe('12:22:00 UTC');
  });

  it('uses the given zone, including its day', () => {
    expect(localTime(T, T, { timeZone: 'Asia/Tokyo' })).toBe('21:22 GMT+9');
    expect(localTime(T + 3 * 3600_000, T, { timeZone: 'Asia/Tokyo' })).toBe('2026-12-01 00:22 GMT+9');
    expect(localDateTime(T, { timeZone: 'America/New_York' })).toBe('2026-11-30 07:22:00 EST');
  });

  it('says when a job is expected to start', () => {
    expect(startsIn(T + 2 * 3600_000 + 10 * 60_000, T, { timeZone: 'UTC' })).toBe('in about 2 h 10 min (14:32 UTC)');
    expect(startsIn(T + 30_000, T, { timeZone: 'UTC' })).toBe('any moment now (12:22 UTC)');
    expect(startsIn(T - 60_000, T, { timeZone: 'UTC' })).toBe('any moment now (12:21 UTC)');
  });
});
