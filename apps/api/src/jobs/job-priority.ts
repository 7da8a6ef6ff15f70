import { forbidden, unknownReference } from '#common';
import { choosePriorityClass } from '#core';
import type { PriorityChoice } from '#db';
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
 * allowed; admins may choose any class. An unknown class is a 422. The decision is libs/core's
 * (choosePriorityClass), the one the Kubernetes importers make too.
 */
export function priorityFromClasses(ask: PriorityAsk, caller: Principal, choice: PriorityChoice): ResolvedPriority {
  // An unknown team (ceiling undefined) is not checked here: the INSERT refuses it (422 naming the team).
  const decision = choosePriorityClass(ask.priorityClass, { classes: choice.classes, ceiling: choice.ceiling ?? null }, { enforceCeiling: caller.role !== 'admin' && choice.ceiling !== undefined });
  if (decision.ok) return { priority: decision.priority, priorityClass: decision.priorityClass };
  throw decision.code === 'UNKNOWN_CLASS' ? unknownReference('priorityClass', decision.message) : forbidden(decision.message);
}
