import type { Metrics } from './metrics.js';

export interface TeamDiff {
  team: string;
  baseline: { meanWaitSeconds: number; p99WaitSeconds: number; meanJctSeconds: number; acceleratorHours: number; completed: number };
  changed: { meanWaitSeconds: number; p99WaitSeconds: number; meanJctSeconds: number; acceleratorHours: number; completed: number };
  /** changed − baseline. */
  delta: { meanWaitSeconds: number; p99WaitSeconds: number; meanJctSeconds: number; acceleratorHours: number; completed: number };
}

export interface WhatIfDiff {
  changes: string[];
  overall: TeamDiff;
  teams: TeamDiff[];
}

type Figures = TeamDiff['baseline'];

function figures(m: Metrics['teams'][string] | Metrics['overall'] | undefined, hours: number): Figures {
  if (m === undefined) return { meanWaitSeconds: 0, p99WaitSeconds: 0, meanJctSeconds: 0, acceleratorHours: 0, completed: 0 };
  return {
    meanWaitSeconds: m.queueingDelaySeconds.mean,
    p99WaitSeconds: m.queueingDelaySeconds.p99,
    meanJctSeconds: m.jctSeconds.mean,
    acceleratorHours: hours,
    completed: m.completed,
  };
}

function diff(team: string, a: Figures, b: Figures): TeamDiff {
  return {
    team,
    baseline: a,
    changed: b,
    delta: {
      meanWaitSeconds: b.meanWaitSeconds - a.meanWaitSeconds,
      p99WaitSeconds: b.p99WaitSeconds - a.p99WaitSeconds,
      meanJctSeconds: b.meanJctSeconds - a.meanJctSeconds,
      acceleratorHours: b.acceleratorHours - a.acceleratorHours,
      completed: b.completed - a.completed,
    },
  };
}

/** Per-team difference between a baseline run and the same trace with changed quotas or fleet. */
export function whatIfDiff(changes: string[], baseline: Metrics, changed: Metrics): WhatIfDiff {
  const teams = [...new Set([...Object.keys(baseline.teams), ...Object.keys(changed.teams)])].sort();
  const totalHours = (m: Metrics): number => Object.values(m.teams).reduce((s, t) => s + t.acceleratorHours, 0);
  return {
    changes,
    overall: diff('(all)', figures(baseline.overall, totalHours(baseline)), figures(changed.overall, totalHours(changed))),
    teams: teams.map((t) =>
      diff(t, figures(baseline.teams[t], baseline.teams[t]?.acceleratorHours ?? 0), figures(changed.teams[t], changed.teams[t]?.acceleratorHours ?? 0)),
    ),
  };
}
