/**
 * Which priority a job gets from the class its submitter names (ADR 0022): one decision for REST submissions
 * (apps/api) and for workloads imported from Kubernetes (apps/scheduler). Pure: the caller reads the classes
 * and the team's ceiling, and turns a refusal into its own error (an HTTP status, a Warning Event).
 */

/** A priority class as the choice needs it. */
export interface PriorityClassOption {
  readonly name: string;
  readonly value: number;
  readonly isDefault: boolean;
}

/** What a submission for one team chooses among: every class, and the team's `maxPriorityClass` (null: none). */
export interface TeamPriorityClasses {
  readonly classes: readonly PriorityClassOption[];
  readonly ceiling: string | null;
}

export interface PriorityClassChoiceOptions {
  /** False for whoever may choose any class (an admin over REST); true for a team's members. */
  readonly enforceCeiling: boolean;
}

/** The highest value a team's members may choose, and why (for messages). */
export interface PriorityCeiling {
  readonly value: number;
  readonly why: string;
}

export type PriorityClassDecision =
  | { readonly ok: true; readonly priority: number; readonly priorityClass: string | null }
  | {
      readonly ok: false;
      /** UNKNOWN_CLASS: no class has that name; ABOVE_CEILING: the class is above what the team's members may choose. */
      readonly code: 'UNKNOWN_CLASS' | 'ABOVE_CEILING';
      readonly message: string;
      /** The classes the team's members may choose, highest first as given. */
      readonly allowed: readonly string[];
    };

/**
 * A team's ceiling: its `maxPriorityClass`, else the default class, else priority 0 — forgetting to set a
 * ceiling never lets a team climb. A ceiling naming a class that does not exist counts as none.
 */
export function priorityCeiling(team: TeamPriorityClasses): PriorityCeiling {
  const max = team.ceiling === null ? undefined : team.classes.find((c) => c.name === team.ceiling);
  if (max !== undefined) return { value: max.value, why: `the team's maxPriorityClass is ${max.name}, ${max.value}` };
  const fallback = team.classes.find((c) => c.isDefault);
  if (fallback !== undefined) return { value: fallback.value, why: `the team has no maxPriorityClass: up to the default class ${fallback.name}, ${fallback.value}` };
  return { value: 0, why: 'the team has no maxPriorityClass and there is no default class: up to priority 0' };
}

/** The names of the classes a team's members may choose (at most its ceiling), in the order given. */
export function allowedPriorityClasses(team: TeamPriorityClasses): string[] {
  const ceiling = priorityCeiling(team);
  return team.classes.filter((c) => c.value <= ceiling.value).map((c) => c.name);
}

/**
 * The priority a class gives a job. No class named (null, undefined): the default class, or priority 0 with no
 * class when there is none. A named class must exist (UNKNOWN_CLASS) and, with `enforceCeiling`, be at most
 * the team's ceiling (ABOVE_CEILING, naming the classes allowed).
 */
export function choosePriorityClass(
  asked: string | null | undefined,
  team: TeamPriorityClasses,
  options: PriorityClassChoiceOptions,
): PriorityClassDecision {
  if (asked == null) {
    const fallback = team.classes.find((c) => c.isDefault);
    return fallback === undefined ? { ok: true, priority: 0, priorityClass: null } : { ok: true, priority: fallback.value, priorityClass: fallback.name };
  }
  const chosen = team.classes.find((c) => c.name === asked);
  if (chosen === undefined) {
    const known = team.classes.map((c) => c.name);
    return {
      ok: false,
      code: 'UNKNOWN_CLASS',
      message: `unknown priority class: ${asked} (${known.length > 0 ? `known: ${known.join(', ')}` : 'none is defined; an admin defines them with PUT /v1/priority-classes/{name}'})`,
      allowed: allowedPriorityClasses(team),
    };
  }
  if (options.enforceCeiling) {
    const ceiling = priorityCeiling(team);
    if (chosen.value > ceiling.value) {
      const allowed = allowedPriorityClasses(team);
      return {
        ok: false,
        code: 'ABOVE_CEILING',
        message:
          `priority class ${chosen.name} (${chosen.value}) is above what team members may choose (${ceiling.why}): ` +
          `${allowed.length > 0 ? `choose ${allowed.join(', ')}` : 'no class is allowed; submit without one'}, or ask an infra lead to raise the team's maxPriorityClass`,
        allowed,
      };
    }
  }
  return { ok: true, priority: chosen.value, priorityClass: chosen.name };
}
