import { forbidden, unknownReference } from '#common';
import type { PriorityChoice, PriorityClassRecord } from '#db';
import type { Principal } from '../auth/principal.js';
import { validationFailed } from '../validation/validation.pipe.js';

/** A job's priority, and the class it came from (null: a number an admin gave, or no class at all). */
export interface ResolvedPriority {
  priority: number;
  priorityClass: string | null;
}

/** What a submission asked for: a number (admins only), a class, or neither (absent or null: JSON clients send both). */
export interface PriorityAsk {
  priority?: number | null;
  priorityClass?: string | null;
}

/**
 * Refuses what a caller may never ask, before anything is read: a number from anyone but an admin (400),
 * or a number and a class together (400). Returns the resolved priority when no class needs to be read.
 */
export function priorityWithoutClasses(ask: PriorityAsk, caller: Principal): ResolvedPriority | undefined {
  if (ask.priority != null && ask.priorityClass != null) {
    throw validationFailed([{ field: 'priority', message: 'give priority or priorityClass, not both' }]);
  }
  if (ask.priority != null) {
    if (caller.role !== 'admin') {
      throw validationFailed([{ field: 'priority', message: 'members choose a priorityClass (GET /v1/priority-classes lists them); a numeric priority is for admins' }]);
    }
    return { priority: ask.priority, priorityClass: null };
  }
  return undefined;
}

/**
 * The priority a class (or the default) gives the job. A member's class must be at most the team's ceiling —
 * its `maxPriorityClass`, else the default class, else priority 0 — or it is refused (403) with the classes
 * allowed; admins may choose any class. An unknown class is a 422.
 */
export function priorityFromClasses(ask: PriorityAsk, caller: Principal, choice: PriorityChoice): ResolvedPriority {
  const byName = new Map(choice.classes.map((c) => [c.name, c]));
  const fallback = choice.classes.find((c) => c.isDefault);
  if (ask.priorityClass == null) return fallback === undefined ? { priority: 0, priorityClass: null } : { priority: fallback.value, priorityClass: fallback.name };
  const chosen = byName.get(ask.priorityClass);
  if (chosen === undefined) {
    const known = choice.classes.map((c) => c.name);
    throw unknownReference('priorityClass', `unknown priority class: ${ask.priorityClass} (${known.length > 0 ? `known: ${known.join(', ')}` : 'none is defined; an admin defines them with PUT /v1/priority-classes/{name}'})`);
  }
  if (caller.role !== 'admin' && choice.ceiling !== undefined) {
    const ceiling = ceilingOf(choice, byName, fallback);
    if (chosen.value > ceiling.value) {
      const allowed = choice.classes.filter((c) => c.value <= ceiling.value).map((c) => c.name);
      throw forbidden(
        `priority class ${chosen.name} (${chosen.value}) is above what team members may choose (${ceiling.why}): ` +
          `${allowed.length > 0 ? `choose ${allowed.join(', ')}` : 'no class is allowed; submit without one'}, or ask an infra lead to raise the team's maxPriorityClass`,
      );
    }
  }
  return { priority: chosen.value, priorityClass: chosen.name };
}

function ceilingOf(choice: PriorityChoice, byName: ReadonlyMap<string, PriorityClassRecord>, fallback: PriorityClassRecord | undefined): { value: number; why: string } {
  const max = choice.ceiling === null || choice.ceiling === undefined ? undefined : byName.get(choice.ceiling);
  if (max !== undefined) return { value: max.value, why: `the team's maxPriorityClass is ${max.name}, ${max.value}` };
  if (fallback !== undefined) return { value: fallback.value, why: `the team has no maxPriorityClass: up to the default class ${fallback.name}, ${fallback.value}` };
  return { value: 0, why: 'the team has no maxPriorityClass and there is no default class: up to priority 0' };
}
