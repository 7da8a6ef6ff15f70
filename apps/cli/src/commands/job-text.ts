import { FINAL_STATES, type Job, type JobDetail } from '#api-client';
import { clip } from '../output/render.js';
import { age, durationWords, localDateTime, parseTime, startsIn, type TimeOptions } from '../output/time.js';

/** Pending codes that no amount of waiting cures: the job must change (or quota/flavors must). */
const NEVER_BY_ITSELF = new Set(['INVALID', 'UNSATISFIABLE', 'NO_QUOTA']);

/**
 * What its executor last reported: `40% done at its last checkpoint, 2026-12-02 08:00 UTC (5 min ago)`;
 * undefined before any report.
 */
export function progressText(j: JobDetail, now: number, time: TimeOptions): string | undefined {
  const done = j.progress.completedFraction;
  const saved = parseTime(j.progress.lastCheckpointAt);
  if (done === null && saved === null) return undefined;
  const fraction = done === null ? 'progress' : `${Math.round(done * 1000) / 10}% done`;
  return `${fraction}${saved === null ? '' : ` at its last checkpoint, ${localDateTime(saved, time)} (${age(saved, now)} ago)`}`;
}

export function replicasText(j: Job): string {
  if (j.admittedReplicas !== null && j.state !== 'PENDING') return j.admittedReplicas === j.replicas ? String(j.replicas) : `${j.admittedReplicas}/${j.replicas}`;
  return j.minReplicas === j.replicas ? String(j.replicas) : `${j.minReplicas}-${j.replicas}`;
}

export const flavorText = (j: Job): string => j.flavor ?? j.flavors.join(',');

export const accelerators = (j: Job): number => (j.state === 'PENDING' || j.admittedReplicas === null ? j.replicas : j.admittedReplicas) * j.acceleratorsPerReplica;

/** The ETA cell: `~2 h 10 min`, `now`, or `-`. */
export function etaCell(j: Job, now: number): string {
  const eta = parseTime(j.pending?.estimatedStartAt);
  if (j.state !== 'PENDING' || eta === null) return '-';
  return eta - now < 60_000 ? 'now' : `~${durationWords(eta - now)}`;
}

export const positionCell = (j: Job): string => (j.state === 'PENDING' && j.pending?.position != null ? `#${j.pending.position}` : '-');

/**
 * `qm why`: what the job waits for and when it is expected to start, or why there is no estimate; for
 * a job that is not pending, what it is doing. One short paragraph.
 */
export function whyText(j: JobDetail, now: number, time: TimeOptions): string {
  const lines: string[] = [];
  const since = (iso: string | null): string => {
    const t = parseTime(iso);
    return t === null ? '' : ` for ${age(t, now)}`;
  };
  switch (j.state) {
    case 'PENDING': {
      const p = j.pending;
      const waited = parseTime(j.queuedAt);
      lines.push(`${j.team}/${j.name} (${j.id}) is PENDING${waited === null ? '' : `, waiting for ${age(waited, now)}`}${j.preemptionCount > 0 ? ` (preempted ${j.preemptionCount}×, last by ${j.preemptedBy ?? 'unknown'})` : ''}.`);
      if (p === null || p.code === null) {
        lines.push(`reason: not yet considered — ${p?.message ?? 'waiting for the next scheduling cycle'}`);
        lines.push('estimate: none yet; the next scheduling cycle will give a reason and, where it can, a start time.');
        break;
      }
      lines.push(`reason: ${p.code} — ${p.message}`);
      if (p.position !== null) lines.push(`position: ${p.position} in the queue`);
      const eta = parseTime(p.estimatedStartAt);
      if (eta !== null) {
        lines.push(p.code === 'BUDGET_EXHAUSTED' ? `expected to start ${startsIn(eta, now, time)}, when the team's next budget period begins.` : `expected to start ${startsIn(eta, now, time)}.`);
      } else if (NEVER_BY_ITSELF.has(p.code)) {
        lines.push('no estimate: it cannot start as submitted; change the job (flavors, replicas, topology) or ask for quota.');
      } else if (p.code === 'ADMISSION_LIMIT') {
        lines.push('no estimate: the per-team admission limit of the cycle was reached; it is considered again next cycle.');
      } else {
        lines.push('no estimate: only the jobs at the head of the queue get a reserved start time (the scheduler reservation depth); this one gets one as jobs ahead of it start.');
      }
      break;
    }
    case 'ADMITTED':
    case 'BINDING':
      lines.push(`${j.team}/${j.name} (${j.id}) is ${j.state}${since(j.admittedAt)}: admitted with ${replicasText(j)} replica(s) on ${j.flavor ?? '?'}, starting.`);
      break;
    case 'RUNNING':
      lines.push(`${j.team}/${j.name} (${j.id}) is RUNNING${since(j.startedAt ?? j.admittedAt)} with ${replicasText(j)} replica(s) on ${j.flavor ?? '?'}; it is not waiting.`);
      break;
    case 'PREEMPTED':
      lines.push(`${j.team}/${j.name} (${j.id}) was PREEMPTED${j.preemptedBy ? ` by ${j.preemptedBy}` : ''} and is being requeued.`);
      break;
    case 'SUCCEEDED':
    case 'FAILED':
    case 'CANCELLED': {
      const end = parseTime(j.finishedAt);
      lines.push(`${j.team}/${j.name} (${j.id}) ${j.state === 'CANCELLED' ? 'was CANCELLED' : j.state === 'FAILED' ? 'FAILED' : 'SUCCEEDED'}${end === null ? '' : ` ${age(end, now)} ago`}; it is not waiting.`);
      // The reason of the transition that ended it.
      const last = [...j.transitions].reverse().find((t) => t.to === j.state);
      if (last !== undefined && last.reason !== '') lines.push(`reason: ${last.reason}`);
      break;
    }
  }
  return lines.join('\n') + '\n';
}

/** One line per state change for `qm submit --wait`. */
export function stateLine(j: Job, now: number, time: TimeOptions): string {
  if (j.state === 'PENDING') {
    const p = j.pending;
    if (p === null || p.code === null) return `PENDING: ${p?.message ?? 'waiting for the next scheduling cycle'}`;
    const eta = parseTime(p.estimatedStartAt);
    const where = [p.position !== null ? `position ${p.position}` : null, eta !== null ? `expected to start ${startsIn(eta, now, time)}` : 'no estimate yet']
      .filter((x) => x !== null)
      .join(', ');
    return `PENDING ${p.code}: ${clip(p.message, 200)} (${where})`;
  }
  if (j.state === 'RUNNING') return `RUNNING with ${replicasText(j)} replica(s) on ${j.flavor ?? '?'}`;
  if (j.state === 'ADMITTED' || j.state === 'BINDING') return `${j.state} with ${replicasText(j)} replica(s) on ${j.flavor ?? '?'}`;
  if (FINAL_STATES.has(j.state)) return j.state;
  return j.state;
}

/**
 * Where an imported job comes from: `JobSet ml/train (jobset.x-k8s.io/v1alpha2, uid …); roles: workers 8`, a
 * LeaderWorkerSet's group, or the annotated pods' gang. Undefined for jobs submitted to Quartermaster.
 */
export function sourceText(j: Pick<JobDetail, 'workload' | 'template'>): string | undefined {
  const w = j.workload;
  const t = templateFacts(j.template);
  if (w) {
    const group = t.workloadGroup !== undefined ? ` group ${t.workloadGroup}` : '';
    const roles = t.roles.map((r) => (r.minCount < r.count ? `${r.name} ${r.minCount}-${r.count}` : `${r.name} ${r.count}`));
    return `${w.kind} ${w.namespace}/${w.name}${group} (${w.apiVersion}, uid ${w.uid})${roles.length > 0 ? `; pods: ${roles.join(', ')}` : ''}`;
  }
  const gang = t.importedFrom;
  return gang ? `pods of gang ${gang.namespace}/${gang.gang} (quartermaster.io/gang annotations)` : undefined;
}

/**
 * What `qm` shows of a job's pod template, which the API returns as free-form JSON (as submitted, plus what
 * an import adds: the workload's group, its roles, an annotated gang). Fields of another type are left out.
 */
export function templateFacts(template: Record<string, unknown>): {
  image?: string;
  command: string[];
  workloadGroup?: string;
  roles: { name: string; count: number; minCount: number }[];
  importedFrom?: { namespace: string; gang: string };
} {
  const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  const roles = Array.isArray(template['roles'])
    ? (template['roles'] as unknown[]).filter(
        (r): r is { name: string; count: number; minCount: number } =>
          typeof r === 'object' && r !== null && typeof (r as { name?: unknown }).name === 'string' && typeof (r as { count?: unknown }).count === 'number' && typeof (r as { minCount?: unknown }).minCount === 'number',
      )
    : [];
  const from = template['importedFrom'] as { namespace?: unknown; gang?: unknown } | undefined;
  const group = template['workloadGroup'];
  return {
    ...(typeof template['image'] === 'string' ? { image: template['image'] } : {}),
    command: [...strings(template['command']), ...strings(template['args'])],
    ...(typeof group === 'string' || typeof group === 'number' ? { workloadGroup: String(group) } : {}),
    roles,
    ...(from && typeof from.namespace === 'string' && typeof from.gang === 'string' ? { importedFrom: { namespace: from.namespace, gang: from.gang } } : {}),
  };
}
