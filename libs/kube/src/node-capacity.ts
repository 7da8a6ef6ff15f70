import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { isNodeSchedulable } from './node-mapping.js';
import { isTerminalPod, podRequests } from './pod-resources.js';
import { count, cpuMillis, memoryMiB } from './quantity.js';

/** Accelerators (of one extended resource), CPU millicores and memory MiB. */
export interface Resources {
  accelerators: number;
  cpuMillis: number;
  memoryMiB: number;
}

/**
 * How a pod found on a node counts against a bind there:
 * - `self`: a pod of the gang being bound, for a replica allocated to this node (its need is counted already);
 * - `holds`: it holds its resources and will go on holding them (a live pod of another scheduler, or of a
 *   Quartermaster job whose allocation names this node);
 * - `leaving`: it holds them only until it is gone (terminating, or a Quartermaster pod whose job no
 *   longer holds an allocation here: it is being deleted).
 */
export type PodStanding = 'self' | 'holds' | 'leaving';

export interface NodeRoom {
  node: string;
  allocatable: Resources;
  /** What `holds` pods use. */
  held: Resources;
  /** What `leaving` pods still use. */
  leaving: Resources;
  /** Names of the leaving pods (for messages). */
  leavingPods: string[];
  /** Non-null when nothing may be bound there at all (cordoned, not ready, being deleted). */
  unschedulable: string | null;
}

export type NodeVerdict =
  | { kind: 'fits' }
  /** Fits once the leaving pods are gone: wait for them. */
  | { kind: 'wait'; message: string }
  /** Does not fit even then: pods the gang did not account for took the room (or the node cannot take pods). */
  | { kind: 'conflict'; message: string };

const ZERO: Resources = { accelerators: 0, cpuMillis: 0, memoryMiB: 0 };
const add = (a: Resources, b: Resources): Resources => ({ accelerators: a.accelerators + b.accelerators, cpuMillis: a.cpuMillis + b.cpuMillis, memoryMiB: a.memoryMiB + b.memoryMiB });

/** The first dimension on which `used` exceeds `allocatable`, in words; null when everything fits. */
function overflow(allocatable: Resources, used: Resources, resourceName: string): string | null {
  if (used.accelerators > allocatable.accelerators) return `${used.accelerators} of ${allocatable.accelerators} ${resourceName}`;
  if (used.cpuMillis > allocatable.cpuMillis) return `${used.cpuMillis}m of ${allocatable.cpuMillis}m CPU`;
  if (used.memoryMiB > allocatable.memoryMiB) return `${used.memoryMiB} of ${allocatable.memoryMiB} MiB memory`;
  return null;
}

/**
 * What a node offers a bind, from the live Node and the non-terminal pods bound to it, each classified by
 * `standing`. Requests round up, capacity rounds down, as kube-scheduler and the node sync count them.
 */
export function nodeRoom(node: V1Node, pods: readonly V1Pod[], resourceName: string, standing: (pod: V1Pod) => PodStanding): NodeRoom {
  const allocatable = node.status?.allocatable ?? {};
  const name = node.metadata?.name ?? '';
  let held = ZERO;
  let leaving = ZERO;
  const leavingPods: string[] = [];
  for (const pod of pods) {
    if (pod.spec?.nodeName !== name || isTerminalPod(pod)) continue;
    const kind = standing(pod);
    if (kind === 'self') continue;
    const requests = podRequests(pod, resourceName);
    if (kind === 'holds') held = add(held, requests);
    else {
      leaving = add(leaving, requests);
      leavingPods.push(`${pod.metadata?.namespace}/${pod.metadata?.name}`);
    }
  }
  let unschedulable: string | null = null;
  if (node.metadata?.deletionTimestamp) unschedulable = 'is being deleted';
  else if (node.spec?.unschedulable) unschedulable = 'is cordoned';
  else if (!isNodeSchedulable(node)) unschedulable = 'is not ready';
  return {
    node: name,
    allocatable: {
      accelerators: count(allocatable[resourceName] ?? '0', 'floor'),
      cpuMillis: allocatable.cpu === undefined ? 0 : cpuMillis(allocatable.cpu, 'floor'),
      memoryMiB: allocatable.memory === undefined ? 0 : memoryMiB(allocatable.memory, 'floor'),
    },
    held,
    leaving,
    leavingPods,
    unschedulable,
  };
}

/**
 * May `need` be bound to the node now? Conflict when it does not fit beside the pods that hold their
 * share (DESIGN rule 1 against pods Quartermaster did not place too); wait when it fits only once the
 * leaving pods are gone; fits otherwise.
 */
export function nodeVerdict(room: NodeRoom, need: Resources, resourceName: string): NodeVerdict {
  if (room.unschedulable) return { kind: 'conflict', message: `node ${room.node} ${room.unschedulable}` };
  const hard = overflow(room.allocatable, add(room.held, need), resourceName);
  if (hard) {
    return {
      kind: 'conflict',
      message: `node ${room.node} has no room: the replicas allocated there need ${need.accelerators} ${resourceName}, ${need.cpuMillis}m CPU, ${need.memoryMiB} MiB, and with the pods already running there that makes ${hard}`,
    };
  }
  const soft = overflow(room.allocatable, add(add(room.held, room.leaving), need), resourceName);
  if (soft) {
    return {
      kind: 'wait',
      message: `node ${room.node}: waiting for ${room.leavingPods.length} terminating or released pod(s) to go (${room.leavingPods.slice(0, 3).join(', ')}); until then it would hold ${soft}`,
    };
  }
  return { kind: 'fits' };
}
