// kube-scheduler extender v1 JSON (k8s.io/kube-scheduler/extender/v1 types.go: Go field names, no json tags).
import type { V1NodeList, V1Pod } from '@kubernetes/client-node';

export interface ExtenderArgs {
  Pod: V1Pod;
  Nodes?: V1NodeList | null;
  NodeNames?: string[] | null;
}

export type FailedNodesMap = Record<string, string>;

export interface ExtenderFilterResult {
  Nodes?: V1NodeList | null;
  NodeNames?: string[] | null;
  FailedNodes: FailedNodesMap;
  FailedAndUnresolvableNodes: FailedNodesMap;
  Error: string;
}

export interface HostPriority {
  Host: string;
  Score: number;
}

export interface ExtenderBindingArgs {
  PodName: string;
  PodNamespace: string;
  PodUID: string;
  Node: string;
}

export interface ExtenderBindingResult {
  Error: string;
}

export interface MetaVictims {
  Pods: { UID: string }[];
  NumPDBViolations: number;
}

export interface ExtenderPreemptionArgs {
  Pod: V1Pod;
  NodeNameToVictims?: Record<string, { Pods: V1Pod[]; NumPDBViolations: number }> | null;
  NodeNameToMetaVictims?: Record<string, MetaVictims> | null;
}

export interface ExtenderPreemptionResult {
  NodeNameToMetaVictims: Record<string, MetaVictims>;
}

/** Maximum score of a HostPriority (MaxExtenderPriority). */
export const MAX_EXTENDER_PRIORITY = 10;
