import type { Quota, ReclaimPolicy, Team, WithinTeamPolicy } from '#core';
import { fieldError, isRecord, parseStructured } from './cluster-file.js';
import type { ClusterSpec, TenancySpec } from './types.js';

/**
 * A tenancy file (YAML or JSON):
 * ```yaml
 * cohorts: [research]
 * teams:
 *   - name: vision
 *     cohort: research          # optional; null/absent = no borrowing
 *     weight: 1                 # optional
 *     withinTeam: LowerPriority # optional
 *     reclaimWithinCohort: Any  # optional
 *     quotas:
 *       h100-80gb: 48                                    # nominal only (unlimited borrowing/lending)
 *       a100-40gb: { nominal: 16, borrowingLimit: 8, lendingLimit: 0 }
 *       l4: { nominal: 8, cpuMillisLimit: 128000, memoryMiBLimit: 1048576 }  # CPU and memory caps on its nodes
 * ```
 */
const WITHIN: WithinTeamPolicy[] = ['Never', 'LowerPriority', 'LowerOrNewerEqualPriority'];
const RECLAIM: ReclaimPolicy[] = ['Never', 'LowerPriority', 'Any'];

function limit(v: unknown, source: string, path: string): number | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw fieldError(source, path, `must be a non-negative integer or null, got ${JSON.stringify(v)}`);
  return v;
}

export function parseTenancyFile(text: string, source: string, cluster: ClusterSpec): TenancySpec {
  const data = parseStructured(text, source);
  if (!isRecord(data)) throw new Error(`${source}: expected a mapping with 'teams'`);
  const cohortNames = data.cohorts ?? [];
  if (!Array.isArray(cohortNames) || !cohortNames.every((c) => typeof c === 'string')) throw fieldError(source, 'cohorts', 'must be a list of names');
  const cohorts = new Set<string>(cohortNames);
  if (!Array.isArray(data.teams) || data.teams.length === 0) throw fieldError(source, 'teams', 'must be a non-empty list');
  const flavors = new Set(cluster.flavors.map((f) => f.name));
  const teams: Team[] = [];
  const quotas: Quota[] = [];
  data.teams.forEach((raw: unknown, i: number) => {
    const path = `teams[${i}]`;
    if (!isRecord(raw)) throw fieldError(source, path, 'must be a mapping');
    if (typeof raw.name !== 'string' || raw.name === '') throw fieldError(source, `${path}.name`, 'must be a name');
    if (teams.some((t) => t.name === raw.name)) throw fieldError(source, `${path}.name`, `duplicate team '${raw.name}'`);
    const cohort = raw.cohort ?? null;
    if (cohort !== null && (typeof cohort !== 'string' || !cohorts.has(cohort))) {
      throw fieldError(source, `${path}.cohort`, `unknown cohort ${JSON.stringify(cohort)} (declared: ${[...cohorts].join(', ') || 'none'})`);
    }
    const weight = raw.weight ?? 1;
    if (typeof weight !== 'number' || !Number.isInteger(weight) || weight < 1) throw fieldError(source, `${path}.weight`, 'must be a positive integer');
    const within = (raw.withinTeam ?? 'LowerPriority') as WithinTeamPolicy;
    if (!WITHIN.includes(within)) throw fieldError(source, `${path}.withinTeam`, `must be one of ${WITHIN.join(', ')}`);
    const reclaim = (raw.reclaimWithinCohort ?? 'Any') as ReclaimPolicy;
    if (!RECLAIM.includes(reclaim)) throw fieldError(source, `${path}.reclaimWithinCohort`, `must be one of ${RECLAIM.join(', ')}`);
    teams.push({ name: raw.name, cohort, fairShareWeight: weight, preemption: { withinTeam: within, reclaimWithinCohort: reclaim } });
    if (!isRecord(raw.quotas)) throw fieldError(source, `${path}.quotas`, 'must be a mapping flavor → nominal or {nominal, borrowingLimit, lendingLimit, cpuMillisLimit, memoryMiBLimit}');
    for (const [flavor, q] of Object.entries(raw.quotas)) {
      const qpath = `${path}.quotas.${flavor}`;
      if (!flavors.has(flavor)) throw fieldError(source, qpath, `unknown flavor '${flavor}' (cluster has ${[...flavors].join(', ')})`);
      if (typeof q === 'number') {
        quotas.push({ team: raw.name, flavor, nominal: limit(q, source, qpath) ?? 0, borrowingLimit: null, lendingLimit: null });
      } else if (isRecord(q)) {
        const nominal = limit(q.nominal, source, `${qpath}.nominal`);
        if (nominal === null) throw fieldError(source, `${qpath}.nominal`, 'is required');
        quotas.push({
          team: raw.name,
          flavor,
          nominal,
          borrowingLimit: limit(q.borrowingLimit, source, `${qpath}.borrowingLimit`),
          lendingLimit: limit(q.lendingLimit, source, `${qpath}.lendingLimit`),
          cpuMillisLimit: limit(q.cpuMillisLimit, source, `${qpath}.cpuMillisLimit`),
          memoryMiBLimit: limit(q.memoryMiBLimit, source, `${qpath}.memoryMiBLimit`),
        });
      } else {
        throw fieldError(source, qpath, 'must be a number or a mapping');
      }
    }
  });
  return { cohorts: [...cohorts].map((name) => ({ name })), teams, quotas };
}

/**
 * Derived tenancy: every team in one cohort with unlimited borrowing and lending; each flavor's
 * capacity is split into nominal quotas in proportion to `weights` (largest remainder, ties by name;
 * teams without a weight get nominal 0 and live on borrowing).
 */
export function deriveTenancy(teamNames: string[], weights: Record<string, number>, cluster: ClusterSpec, cohort = 'all'): TenancySpec {
  const names = [...new Set(teamNames)].sort();
  const teams: Team[] = names.map((name) => ({
    name,
    cohort,
    fairShareWeight: 1,
    preemption: { withinTeam: 'LowerPriority', reclaimWithinCohort: 'Any' },
  }));
  const quotas: Quota[] = [];
  const capacity = new Map<string, number>();
  for (const n of cluster.nodes) capacity.set(n.flavor, (capacity.get(n.flavor) ?? 0) + n.accelerators);
  const totalWeight = names.reduce((s, n) => s + (weights[n] ?? 0), 0);
  for (const flavor of cluster.flavors) {
    const cap = capacity.get(flavor.name) ?? 0;
    const shares = splitLargestRemainder(
      cap,
      names.map((n) => (totalWeight > 0 ? weights[n] ?? 0 : 1)),
    );
    names.forEach((team, i) => quotas.push({ team, flavor: flavor.name, nominal: shares[i]!, borrowingLimit: null, lendingLimit: null }));
  }
  return { cohorts: [{ name: cohort }], teams, quotas };
}

/** Splits an integer total in proportion to weights; remainders go to the largest fractions (then lower index). */
export function splitLargestRemainder(total: number, weights: number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  if (sum <= 0) return weights.map(() => 0);
  const exact = weights.map((w) => (total * w) / sum);
  const out = exact.map((x) => Math.floor(x));
  let left = total - out.reduce((a, b) => a + b, 0);
  const order = exact.map((x, i) => ({ i, frac: x - Math.floor(x) })).sort((a, b) => b.frac - a.frac || a.i - b.i);
  for (const { i } of order) {
    if (left <= 0) break;
    out[i]! += 1;
    left -= 1;
  }
  return out;
}

/** `--quota vision/h100-80gb=48`: sets a team's nominal quota of a flavor (adds the quota if missing). */
export function changeQuota(tenancy: TenancySpec, team: string, flavor: string, nominal: number, cluster: ClusterSpec): TenancySpec {
  if (!tenancy.teams.some((t) => t.name === team)) throw new Error(`--quota: unknown team '${team}'`);
  if (!cluster.flavors.some((f) => f.name === flavor)) throw new Error(`--quota: unknown flavor '${flavor}'`);
  const exists = tenancy.quotas.some((q) => q.team === team && q.flavor === flavor);
  const quotas = exists
    ? tenancy.quotas.map((q) => (q.team === team && q.flavor === flavor ? { ...q, nominal } : q))
    : [...tenancy.quotas, { team, flavor, nominal, borrowingLimit: null, lendingLimit: null }];
  return { ...tenancy, quotas };
}
