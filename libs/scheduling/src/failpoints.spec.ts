import { describe, expect, it } from '@jest/globals';
import { parseFailpoints } from './failpoints.js';

describe('parseFailpoints', () => {
  it('is off when unset', () => {
    expect(parseFailpoints(undefined, () => {})).toBeUndefined();
    expect(parseFailpoints('  ', () => {})).toBeUndefined();
  });

  it('fires a failpoint with its probability', () => {
    let deaths = 0;
    const rolls = [0.1, 0.5, 0.29];
    const hook = parseFailpoints('after-commit:0.3', () => deaths++, () => rolls.shift()!)!;
    hook('after-commit');
    hook('after-commit');
    hook('after-commit');
    expect(deaths).toBe(2);
  });

  it('rejects unknown names and bad probabilities', () => {
    expect(() => parseFailpoints('mid-air:0.5', () => {})).toThrow(/unknown failpoint "mid-air"/);
    expect(() => parseFailpoints('after-commit:2', () => {})).toThrow(/within 0..1/);
  });
});
