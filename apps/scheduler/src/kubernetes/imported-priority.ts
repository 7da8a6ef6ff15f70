import { choosePriorityClass } from '#core';
import type { PriorityChoices } from '#db';
import { LABEL_PRIORITY_CLASS, LABEL_TEAM, priorityClassField, type PriorityClassAsk } from '#kube';

/** The priority an imported workload or gang gets, or why it is not imported (the field and the reason). */
export type ImportedPriority =
  | { ok: true; priority: number; priorityClass: string | null }
  | { ok: false; field: string; message: string };

/**
 * A workload from Kubernetes is a member's submission (ADR 0022): whoever may create a JobSet in a namespace
 * is not an admin. Its class (label quartermaster.io/priority-class, else the pods' priorityClassName when a
 * Quartermaster class has that name — any other Kubernetes class is ignored) must exist and be at most the
 * team's ceiling; none gives the default class, or 0. The decision is libs/core's, as for REST submissions.
 * A team the classes' read does not know is held to the default (its refusal names the team): a team created
 * meanwhile is never taken as one without a ceiling.
 */
export function importedPriority(ask: PriorityClassAsk | null, team: string, choices: PriorityChoices): ImportedPriority {
  const asked = ask !== null && (ask.from === 'label' || choices.classes.some((c) => c.name === ask.name)) ? ask : null;
  const decision = choosePriorityClass(asked?.name, { classes: choices.classes, ceiling: choices.ceilings.get(team) ?? null }, { enforceCeiling: true });
  if (decision.ok) return { ok: true, priority: decision.priority, priorityClass: decision.priorityClass };
  if (!choices.ceilings.has(team)) return { ok: false, field: LABEL_TEAM, message: `unknown team ${JSON.stringify(team)} (create it with PUT /v1/teams/${team})` };
  const field = asked === null ? LABEL_PRIORITY_CLASS : priorityClassField(asked);
  if (decision.code === 'ABOVE_CEILING') return { ok: false, field, message: decision.message };
  const allowed = decision.allowed.length > 0 ? `team ${team} may choose ${decision.allowed.join(', ')}` : `team ${team} may choose no class: leave ${LABEL_PRIORITY_CLASS} out`;
  return { ok: false, field, message: `${decision.message}; ${allowed}` };
}
