import { describe, expect, it } from '@jest/globals';
import { allowedPriorityClasses, choosePriorityClass, priorityCeiling, type PriorityClassOption, type TeamPriorityClasses } from './priority-class-choice.js';

const classes: PriorityClassOption[] = [
  { name: 'high', value: 1000, isDefault: false },
  { name: 'standard', value: 0, isDefault: true },
  { name: 'batch', value: -100, isDefault: false },
];
const member = { enforceCeiling: true };
const team = (ceiling: string | null, of: readonly PriorityClassOption[] = classes): TeamPriorityClasses => ({ classes: of, ceiling });

describe('choosePriorityClass', () => {
  it('no class named: the default class, or priority 0 without a class when there is no default', () => {
    expect(choosePriorityClass(undefined, team(null), member)).toEqual({ ok: true, priority: 0, priorityClass: 'standard' });
    expect(choosePriorityClass(null, team('high', [classes[0]!]), member)).toEqual({ ok: true, priority: 0, priorityClass: null });
    expect(choosePriorityClass(null, team(null, []), member)).toEqual({ ok: true, priority: 0, priorityClass: null });
  });

  it("a class at most the team's ceiling gives its value; the ceiling is maxPriorityClass, else the default, else 0", () => {
    expect(choosePriorityClass('high', team('high'), member)).toEqual({ ok: true, priority: 1000, priorityClass: 'high' });
    expect(choosePriorityClass('batch', team(null), member)).toEqual({ ok: true, priority: -100, priorityClass: 'batch' });
    expect(priorityCeiling(team('high')).value).toBe(1000);
    expect(priorityCeiling(team(null)).value).toBe(0);
    expect(priorityCeiling(team(null, [classes[0]!, classes[2]!]))).toEqual({ value: 0, why: expect.stringContaining('no default class') });
  });

  it('above the ceiling: refused, naming the ceiling and the classes allowed; without the ceiling (an admin) any class', () => {
    const refused = choosePriorityClass('high', team(null), member);
    expect(refused).toEqual({
      ok: false,
      code: 'ABOVE_CEILING',
      allowed: ['standard', 'batch'],
      message:
        "priority class high (1000) is above what team members may choose (the team has no maxPriorityClass: up to the default class standard, 0): choose standard, batch, or ask an infra lead to raise the team's maxPriorityClass",
    });
    expect(choosePriorityClass('high', team(null), { enforceCeiling: false })).toEqual({ ok: true, priority: 1000, priorityClass: 'high' });
    // No default and no maxPriorityClass: up to priority 0, and no class at all may be below it.
    const none = choosePriorityClass('high', team(null, [classes[0]!]), member);
    expect(none).toMatchObject({ ok: false, code: 'ABOVE_CEILING', allowed: [] });
    expect(!none.ok && none.message).toContain('no class is allowed; submit without one');
  });

  it('an unknown class is refused whoever asks, naming the known classes (or how to define one)', () => {
    expect(choosePriorityClass('urgent', team('high'), { enforceCeiling: false })).toEqual({
      ok: false,
      code: 'UNKNOWN_CLASS',
      allowed: ['high', 'standard', 'batch'],
      message: 'unknown priority class: urgent (known: high, standard, batch)',
    });
    const empty = choosePriorityClass('urgent', team(null, []), member);
    expect(!empty.ok && empty.message).toBe('unknown priority class: urgent (none is defined; an admin defines them with PUT /v1/priority-classes/{name})');
  });

  it('a ceiling naming no existing class counts as none', () => {
    expect(allowedPriorityClasses(team('gone'))).toEqual(['standard', 'batch']);
  });
});
