/**
 * Node placement of a multi-role gang (roles.ts) on one flavor: the accelerator roles (largest replicas first)
 * inside one topology group, best fit — the candidate groups with the least free accelerators first, the first
 * where every role fits wins —, then the roles without accelerators on any node of the flavor that fits them
 * (the gang's own nodes, then the nodes with the fewest free accelerators first), under the job's node selector.
 * Each role goes through the uniform placer (gang-placer.ts) on what the roles before it left; the tentative
 * takes are given back before it returns, so the state is unchanged.
 */
import type { ClusterState, NodeGroup } from './cluster-state.js';
import { type GangFit, type GangRequest, placeGang, placeInGroups, slotsOn } from './gang-placer.js';
import type { JobRole, JobSpec } from './model.js';
import type { ReplicaShape } from './quantity.js';
import { roleShape, rolesOf } from './roles.js';
import { groupingOf, splitGrouping } from './topology.js';

export interface RolePlacement {
  /** Node index of every replica, role after role (role order as the job lists them). */
  nodes: number[];
  /** Index into rolesOf(job) of every replica. */
  roleOf: number[];
}

export type RoleFit =
  | ({ ok: true } & RolePlacement)
  | {
      ok: false;
      /** The role that did not fit, and how far it got. */
      role: JobRole;
      count: number;
      fit: GangFit & { ok: false };
      /** The resource that is short for it: accelerators, CPU or memory. */
      short: 'accelerators' | 'CPU' | 'memory';
    };

/**
 * Places every role of `job` at `counts[i]` replicas (its full count or its minimum) on `flavor`. `caps` are the
 * per-node accelerator ceilings of reservations it must not delay.
 */
export function placeRoles(
  state: ClusterState,
  job: JobSpec,
  flavor: string,
  counts: readonly number[],
  caps?: ReadonlyMap<number, number>,
): RoleFit {
  const roles = rolesOf(job);
  const order = roles.map((_, i) => i).filter((i) => counts[i]! > 0);
  // Accelerator roles first, largest replicas first (then by listed order): big pieces before small ones.
  order.sort((x, y) => roles[y]!.acceleratorsPerReplica - roles[x]!.acceleratorsPerReplica || x - y);
  const grouping = groupingOf(job.topology);
  const base = splitGrouping(grouping).base;
  // The accelerator roles share one group; a gang without any keeps all its roles in one.
  const withAccelerators = order.filter((i) => roles[i]!.acceleratorsPerReplica > 0);
  const accelerated = withAccelerators.length > 0 ? withAccelerators : order;
  if (base === 'none') return attempt(state, job, flavor, order, counts, caps, undefined);

  // One group for every accelerator role: try the groups that could hold all of them, tightest first.
  const need = accelerated.reduce((sum, i) => sum + roles[i]!.acceleratorsPerReplica * counts[i]!, 0);
  const groups = state
    .groups(flavor, grouping)
    .filter((g) => g.freeSum >= need)
    .sort((x, y) => x.freeSum - y.freeSum || (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
  let worst: RoleFit | undefined;
  for (const g of groups) {
    const fit = attempt(state, job, flavor, order, counts, caps, g, accelerated);
    if (fit.ok) return fit;
    worst ??= fit;
  }
  if (worst !== undefined) return worst;
  // No group has the accelerators: report the largest accelerator role against the whole grouping.
  const first = accelerated[0]!;
  const req = request(roles[first]!, flavor, counts[first]!, job, caps, true);
  const fit = placeGang(state, req);
  const failed: GangFit & { ok: false } = fit.ok ? { ok: false, grouping, best: 0, nodesWithRoom: 0, groups: state.groups(flavor, grouping).length } : fit;
  return { ok: false, role: roles[first]!, count: counts[first]!, fit: failed, short: 'accelerators' };
}

function request(
  role: JobRole,
  flavor: string,
  count: number,
  job: JobSpec,
  caps: ReadonlyMap<number, number> | undefined,
  grouped: boolean,
): GangRequest {
  const topology = grouped ? job.topology : { level: 'none' as const, ...(job.topology.nodeSelector ? { nodeSelector: job.topology.nodeSelector } : {}) };
  return { flavor, shape: roleShape(role), minK: count, maxK: count, topology, caps };
}

/** Roles one after another on what the earlier ones left (inside `group` for accelerator roles when given). */
function attempt(
  state: ClusterState,
  job: JobSpec,
  flavor: string,
  order: readonly number[],
  counts: readonly number[],
  caps: ReadonlyMap<number, number> | undefined,
  group: NodeGroup | undefined,
  accelerated: readonly number[] = [],
): RoleFit {
  const roles = rolesOf(job);
  const savedFailures = state.savedFailures(flavor);
  const taken: { node: number; shape: ReplicaShape }[] = [];
  const placed = new Map<number, number[]>();
  const gangNodes = new Set<number>();
  let failure: RoleFit | undefined;
  for (const i of order) {
    const role = roles[i]!;
    const shape = roleShape(role);
    const grouped = group !== undefined && accelerated.includes(i);
    const req = request(role, flavor, counts[i]!, job, caps, grouped);
    // A CPU-only role: the gang's own nodes first, where it fits.
    const own = role.acceleratorsPerReplica === 0 && !grouped ? onOwnNodes(state, [...gangNodes], shape, counts[i]!) : [];
    let nodes: number[] | undefined;
    let fit: GangFit;
    if (own.length === counts[i]) {
      nodes = own;
      fit = { ok: true, nodes };
    } else {
      fit = grouped ? placeInGroups(state, [group], (g) => g.freeSum, req) : placeGang(state, req);
      if (fit.ok) nodes = fit.nodes;
    }
    if (nodes === undefined) {
      failure = { ok: false, role, count: counts[i]!, fit: fit as GangFit & { ok: false }, short: shortResource(state, flavor, shape) };
      break;
    }
    placed.set(i, nodes);
    for (const n of nodes) {
      state.take(n, shape);
      taken.push({ node: n, shape });
      gangNodes.add(n);
    }
  }
  for (const t of taken.reverse()) state.give(t.node, t.shape);
  state.restoreFailures(flavor, savedFailures);
  if (failure !== undefined) return failure;
  const out: RolePlacement = { nodes: [], roleOf: [] };
  roles.forEach((_, i) => {
    for (const n of placed.get(i) ?? []) {
      out.nodes.push(n);
      out.roleOf.push(i);
    }
  });
  return { ok: true, ...out };
}

/** `count` replicas of `shape` on the gang's own nodes, or fewer when they do not all fit there. */
function onOwnNodes(state: ClusterState, nodes: readonly number[], shape: ReplicaShape, count: number): number[] {
  const out: number[] = [];
  for (const n of [...nodes].sort((x, y) => x - y)) {
    const s = slotsOn(state, n, shape, count - out.length);
    for (let k = 0; k < s; k++) out.push(n);
    if (out.length >= count) break;
  }
  return out;
}

/** Which resource a replica of `shape` lacks on the flavor's schedulable nodes: accelerators first, then CPU, then memory. */
function shortResource(state: ClusterState, flavor: string, shape: ReplicaShape): 'accelerators' | 'CPU' | 'memory' {
  const fl = state.flavor(flavor);
  let acceleratorRoom = false;
  let cpuRoom = false;
  for (const i of fl?.nodes ?? []) {
    if (state.freeA(i) < shape.a) continue;
    acceleratorRoom = true;
    if (state.freeC(i) < shape.c) continue;
    cpuRoom = true;
    if (state.freeM(i) >= shape.m) return 'accelerators';
  }
  if (!acceleratorRoom) return 'accelerators';
  return cpuRoom ? 'memory' : 'CPU';
}
