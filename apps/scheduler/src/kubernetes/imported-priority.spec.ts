import { describe, expect, it } from '@jest/globals';
import type { PriorityChoices } from '#db';
import { importedPriority } from './imported-priority.js';

const at = new Date(0);
const choices: PriorityChoices = {
  classes: [
    { name: 'high', value: 1000, isDefault: false, description: '', createdAt: at, updatedAt: at },
    { name: 'standard', value: 0, isDefault: true, description: '', createdAt: at, updatedAt: at },
    { name: 'batch', value: -100, isDefault: false, description: '', createdAt: at, updatedAt: at },
  ],
  ceilings: new Map([
    ['vision', 'high'],
    ['nlp', null],
  ]),
};

describe('the priority of an imported workload', () => {
  it('no class: the default; a class within the ceiling: its value', () => {
    expect(importedPriority(null, 'nlp', choices)).toEqual({ ok: true, priority: 0, priorityClass: 'standard' });
    expect(importedPriority({ name: 'high', from: 'label' }, 'vision', choices)).toEqual({ ok: true, priority: 1000, priorityClass: 'high' });
  });

  it('above the ceiling, or unknown: refused on the field it came from, naming the classes the team may choose', () => {
    expect(importedPriority({ name: 'high', from: 'label' }, 'nlp', choices)).toEqual({
      ok: false,
      field: 'quartermaster.io/priority-class',
      message: expect.stringContaining('priority class high (1000) is above what team members may choose (the team has no maxPriorityClass: up to the default class standard, 0): choose standard, batch'),
    });
    expect(importedPriority({ name: 'urgent', from: 'label' }, 'nlp', choices)).toEqual({
      ok: false,
      field: 'quartermaster.io/priority-class',
      message: 'unknown priority class: urgent (known: high, standard, batch); team nlp may choose standard, batch',
    });
    expect(importedPriority({ name: 'high', from: 'pod' }, 'nlp', choices)).toMatchObject({ ok: false, field: 'spec.priorityClassName' });
  });

  it("the pods' priorityClassName counts only when Quartermaster has that class", () => {
    expect(importedPriority({ name: 'system-cluster-critical', from: 'pod' }, 'nlp', choices)).toEqual({ ok: true, priority: 0, priorityClass: 'standard' });
    expect(importedPriority({ name: 'batch', from: 'pod' }, 'nlp', choices)).toEqual({ ok: true, priority: -100, priorityClass: 'batch' });
  });

  it('a team the read does not know is held to the default: a refusal names the team', () => {
    expect(importedPriority({ name: 'batch', from: 'label' }, 'audio', choices)).toEqual({ ok: true, priority: -100, priorityClass: 'batch' });
    expect(importedPriority({ name: 'high', from: 'label' }, 'audio', choices)).toEqual({ ok: false, field: 'quartermaster.io/team', message: expect.stringContaining('unknown team "audio"') });
  });
});
