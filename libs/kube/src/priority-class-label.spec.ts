import { describe, expect, it } from '@jest/globals';
import { priorityClassAsk, priorityClassField } from './priority-class-label.js';

const marks = (m: Partial<Parameters<typeof priorityClassAsk>[0]>) => ({ priorityClass: undefined, priority: undefined, podPriorityClassName: undefined, ...m });

describe('the priority class a Kubernetes object asks for', () => {
  it('the label (trimmed), else the pod’s priorityClassName, else none; an empty label is none', () => {
    expect(priorityClassAsk(marks({ priorityClass: ' high ', podPriorityClassName: 'batch' }))).toEqual({ ok: true, value: { name: 'high', from: 'label' } });
    expect(priorityClassAsk(marks({ podPriorityClassName: 'batch' }))).toEqual({ ok: true, value: { name: 'batch', from: 'pod' } });
    expect(priorityClassAsk(marks({ priorityClass: '' }))).toEqual({ ok: true, value: null });
    expect(priorityClassAsk(marks({}))).toEqual({ ok: true, value: null });
  });

  it('refuses a numeric quartermaster.io/priority whatever else is there, and a label that cannot be a class name', () => {
    expect(priorityClassAsk(marks({ priority: '100', priorityClass: 'high' }))).toEqual({
      ok: false,
      field: 'quartermaster.io/priority',
      message:
        'a numeric priority is not taken from Kubernetes (got "100"): use quartermaster.io/priority-class with a class your team may choose (GET /v1/priority-classes lists them); numbers are for admins over REST',
    });
    expect(priorityClassAsk(marks({ priorityClass: 'High' }))).toMatchObject({ ok: false, field: 'quartermaster.io/priority-class' });
    expect(priorityClassAsk(marks({ priorityClass: 'x'.repeat(64) }))).toMatchObject({ ok: false, field: 'quartermaster.io/priority-class' });
  });

  it('a refusal names where the class came from', () => {
    expect(priorityClassField({ name: 'high', from: 'label' })).toBe('quartermaster.io/priority-class');
    expect(priorityClassField({ name: 'high', from: 'pod' })).toBe('spec.priorityClassName');
  });
});
