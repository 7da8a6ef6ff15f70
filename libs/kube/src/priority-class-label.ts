import { ANNOTATION_PRIORITY, LABEL_PRIORITY_CLASS } from './labels.js';

/** The field a refusal names when the class came from the pod's own Kubernetes priority class. */
export const FIELD_POD_PRIORITY_CLASS = 'spec.priorityClassName';

/**
 * The Quartermaster priority class a workload or an annotated gang asks for (ADR 0022). `from: 'label'`:
 * label quartermaster.io/priority-class, which must name a class the team may choose. `from: 'pod'`: the
 * pods' Kubernetes priorityClassName, which counts only when a Quartermaster class has that name (then as
 * the label would); any other Kubernetes class is ignored, and so is its numeric value.
 */
export interface PriorityClassAsk {
  name: string;
  from: 'label' | 'pod';
}

export type PriorityClassAskResult =
  | { ok: true; value: PriorityClassAsk | null }
  | { ok: false; field: string; message: string };

/** What an object says about its priority, as read (the workload first, then its pod; trimmed or not). */
export interface PriorityMarks {
  /** quartermaster.io/priority-class. */
  priorityClass: string | undefined;
  /** quartermaster.io/priority: refused whatever it holds. */
  priority: string | undefined;
  /** The pod's spec.priorityClassName. */
  podPriorityClassName: string | undefined;
}

const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * The class asked for, or why the object cannot be imported: a numeric quartermaster.io/priority (members never
 * choose a number), or a priority-class value that cannot be a class name. An empty label is no class (the
 * default). Pure: whether the class exists and is within the team's ceiling is decided with the classes
 * (libs/core choosePriorityClass).
 */
export function priorityClassAsk(marks: PriorityMarks): PriorityClassAskResult {
  if (marks.priority !== undefined) {
    return {
      ok: false,
      field: ANNOTATION_PRIORITY,
      message:
        `a numeric priority is not taken from Kubernetes (got ${JSON.stringify(marks.priority)}): ` +
        `use ${LABEL_PRIORITY_CLASS} with a class your team may choose (GET /v1/priority-classes lists them); numbers are for admins over REST`,
    };
  }
  const label = marks.priorityClass?.trim();
  if (label) {
    if (label.length > 63 || !NAME.test(label)) {
      return { ok: false, field: LABEL_PRIORITY_CLASS, message: `must name a priority class (a DNS label), got ${JSON.stringify(label)}` };
    }
    return { ok: true, value: { name: label, from: 'label' } };
  }
  const pod = marks.podPriorityClassName?.trim();
  return { ok: true, value: pod ? { name: pod, from: 'pod' } : null };
}

/** The field a refusal of this ask names. */
export function priorityClassField(ask: PriorityClassAsk): string {
  return ask.from === 'label' ? LABEL_PRIORITY_CLASS : FIELD_POD_PRIORITY_CLASS;
}
