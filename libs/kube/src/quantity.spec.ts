import { describe, expect, it } from '@jest/globals';
import { QuantityError, count, cpuMillis, memoryMiB, parseQuantity } from './quantity.js';

describe('Kubernetes quantities', () => {
  it.each([
    ['2', 2000],
    ['500m', 500],
    ['1.5', 1500],
    ['0.1', 100],
    ['250000u', 250],
    ['1k', 1_000_000],
    ['2e3', 2_000_000],
    ['95900m', 95900],
  ])('cpu %s = %d millicores', (quantity, millis) => {
    expect(cpuMillis(quantity, 'floor')).toBe(millis);
  });

  it.each([
    ['1Gi', 1024],
    ['1.5Gi', 1536],
    ['1Ti', 1_048_576],
    ['512Mi', 512],
    ['1048576', 1],
    ['1G', 953],
    ['2Ki', 0],
  ])('memory %s = %d MiB (rounded down)', (quantity, mib) => {
    expect(memoryMiB(quantity, 'floor')).toBe(mib);
  });

  it('rounds as asked: capacity down, requests up', () => {
    expect(memoryMiB('1G', 'floor')).toBe(953);
    expect(memoryMiB('1G', 'ceil')).toBe(954);
    expect(cpuMillis('1n', 'floor')).toBe(0);
    expect(cpuMillis('1n', 'ceil')).toBe(1);
    expect(memoryMiB('1Mi', 'ceil')).toBe(1);
  });

  it('counts extended resources', () => {
    expect(count('8', 'floor')).toBe(8);
    expect(count(4, 'floor')).toBe(4);
    expect(count('0', 'floor')).toBe(0);
  });

  it('is exact (no floating point)', () => {
    expect(parseQuantity('0.3')).toEqual({ numerator: 3n, denominator: 10n });
    expect(cpuMillis('0.3', 'floor')).toBe(300);
  });

  it.each(['', 'abc', '1.2.3', '-1', '5Xi', '1 Gi', '1e'])('rejects %j with a clear error', (bad) => {
    expect(() => cpuMillis(bad, 'floor')).toThrow(QuantityError);
    expect(() => cpuMillis(bad, 'floor')).toThrow(/invalid Kubernetes quantity/);
  });
});
