import { describe, expect, it } from '@jest/globals';
import { JOB_STATES, TRANSITIONS, assertTransition, canTransition, holdsAllocation, isTerminal } from './lifecycle.js';

describe('job lifecycle', () => {
  it.each([
    ['PENDING', 'ADMITTED', true],
    ['ADMITTED', 'BINDING', true],
    ['BINDING', 'RUNNING', true],
    ['RUNNING', 'SUCCEEDED', true],
    ['RUNNING', 'PREEMPTED', true],
    ['PREEMPTED', 'PENDING', true],
    ['PENDING', 'RUNNING', false],
    ['SUCCEEDED', 'PENDING', false],
    ['CANCELLED', 'RUNNING', false],
    ['PREEMPTED', 'RUNNING', false],
  ] as const)('%s → %s allowed: %s', (from, to, want) => {
    expect(canTransition(from, to)).toBe(want);
  });

  it('terminal states have no way out, and every non-terminal state can be cancelled', () => {
    for (const s of JOB_STATES) {
      if (isTerminal(s)) expect(TRANSITIONS[s]).toEqual([]);
      else expect(TRANSITIONS[s]).toContain('CANCELLED');
    }
  });

  it('only admitted, binding and running jobs hold accelerators', () => {
    expect(JOB_STATES.filter(holdsAllocation)).toEqual(['ADMITTED', 'BINDING', 'RUNNING']);
  });

  it('assertTransition names the allowed moves', () => {
    expect(() => assertTransition('SUCCEEDED', 'RUNNING')).toThrow('cannot move to RUNNING (allowed: none)');
  });
});
