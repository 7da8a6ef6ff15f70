import { readFileSync } from 'node:fs';
import { isDnsSubdomain } from '#common';
import { POD_SECURITY_LEVELS, type PodSecurityLevel } from '#core';

/** Settings of Kubernetes mode (KUBECONFIG set), from the environment. */
export type ReplicaFailurePolicy = 'fail' | 'requeue';

export interface KubernetesSettings {
  /** Namespace Quartermaster creates its jobs' pods in (`QM_KUBE_NAMESPACE`, default `default`). */
  namespace: string;
  /** schedulerName of Quartermaster's pods (`QM_KUBE_SCHEDULER_NAME`, default `quartermaster`). */
  schedulerName: string;
  /** Grace period of evictions and deletions, seconds (`QM_KUBE_GRACE_SECONDS`; unset = the pod's own). */
  gracePeriodSeconds: number | undefined;
  /** A Failed replica fails the gang (`fail`, default) or requeues it (`requeue`) — `QM_KUBE_REPLICA_FAILURE`. */
  replicaFailure: ReplicaFailurePolicy;
  /** Node changes are written to Postgres at most this often (`QM_KUBE_NODE_SYNC_DEBOUNCE_MS`, 100). */
  nodeSyncDebounceMs: number;
  /** Flavors are re-read from Postgres this often (`QM_KUBE_FLAVOR_REFRESH_MS`, 5000). */
  flavorRefreshMs: number;
  /** Annotated foreign pods are looked for this often (`QM_KUBE_IMPORT_EVERY_MS`, 1000; 0 = off). */
  importEveryMs: number;
  /**
   * Name of a coordination.k8s.io Lease (in `namespace`) the scheduler leader must also hold
   * (`QM_KUBE_LEADER_LEASE`; unset = the Postgres lease alone). `kubectl get lease` then shows the leader.
   */
  leaderLease: string | null;
  /**
   * schedulerNames of the kube-scheduler profiles configured with Quartermaster as their extender
   * (`QM_EXTENDER_SCHEDULER_NAMES`, comma-separated, default `default-scheduler`): the extender binds only their pods.
   */
  extenderSchedulerNames: string[];
  /** Namespace of that Lease (`QM_KUBE_LEADER_LEASE_NAMESPACE`, default `namespace`; the chart sets its release's). */
  leaderLeaseNamespace: string;
  /**
   * The namespace of Quartermaster's own ServiceAccount and Secrets (`QM_KUBE_OWN_NAMESPACE`, else the in-cluster
   * ServiceAccount's; null = unknown): never a jobs namespace — the scheduler refuses to start when one is.
   */
  ownNamespace: string | null;
  /** A team's missing namespace is created at its job's admission (`QM_KUBE_CREATE_NAMESPACES`, default false: the job fails). */
  createNamespaces: boolean;
  /** The Pod Security level a created namespace enforces (`QM_KUBE_NAMESPACE_POD_SECURITY`, default `restricted`). */
  namespacePodSecurity: PodSecurityLevel;
  /**
   * Accelerator pods of the delegating profiles that name no gang (`QM_EXTENDER_UNLABELLED_ACCELERATOR_PODS`):
   * `charge` imports each as a one-pod gang of its namespace's team (or of the team its label names there) and
   * refuses one charged to no team; `allow` (default) leaves them to kube-scheduler, outside every quota.
   */
  unlabelledAcceleratorPods: 'allow' | 'charge';
}

/** Where the in-cluster ServiceAccount's namespace is mounted. */
export const SERVICE_ACCOUNT_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

export class KubernetesSettingsError extends Error {}

function integer(env: Record<string, string | undefined>, name: string, fallback: number, min: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new KubernetesSettingsError(`${name}=${raw} must be an integer ≥ ${min}`);
  return value;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function leaderLease(raw: string | undefined): string | null {
  if (raw === undefined || raw === '') return null;
  const valid: boolean = isDnsSubdomain(raw);
  if (!valid) throw new KubernetesSettingsError(`QM_KUBE_LEADER_LEASE=${raw} must be a Lease name (a DNS-1123 subdomain)`);
  return raw;
}

function schedulerNames(raw: string | undefined): string[] {
  if (raw === undefined || raw.trim() === '') return ['default-scheduler'];
  const names = raw.split(',').map((n) => n.trim());
  const bad = names.find((n) => {
    const valid: boolean = isDnsSubdomain(n);
    return !valid;
  });
  if (bad !== undefined) throw new KubernetesSettingsError(`QM_EXTENDER_SCHEDULER_NAMES=${raw}: '${bad}' is not a scheduler name (a DNS-1123 subdomain)`);
  return [...new Set(names)];
}

function dnsLabel(env: Record<string, string | undefined>, name: string, fallback: string): string {
  const value = env[name]?.trim() || fallback;
  if (!DNS_LABEL.test(value) || value.length > 63) throw new KubernetesSettingsError(`${name}=${value} must be a DNS label`);
  return value;
}

function ownNamespace(env: Record<string, string | undefined>, serviceAccountFile: string): string | null {
  if (env['QM_KUBE_OWN_NAMESPACE']?.trim()) return dnsLabel(env, 'QM_KUBE_OWN_NAMESPACE', '');
  try {
    const fromFile = readFileSync(serviceAccountFile, 'utf8').trim();
    return DNS_LABEL.test(fromFile) ? fromFile : null;
  } catch {
    return null;
  }
}

function flag(env: Record<string, string | undefined>, name: string): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '' || raw === 'false' || raw === '0') return false;
  if (raw === 'true' || raw === '1') return true;
  throw new KubernetesSettingsError(`${name}=${env[name]} must be true or false`);
}

function unlabelledPods(raw: string | undefined): 'allow' | 'charge' {
  const value = raw?.trim() || 'allow';
  if (value !== 'allow' && value !== 'charge') throw new KubernetesSettingsError(`QM_EXTENDER_UNLABELLED_ACCELERATOR_PODS=${value} must be allow or charge`);
  return value;
}

function podSecurityLevel(raw: string | undefined): PodSecurityLevel {
  const value = raw?.trim() || 'restricted';
  const level = POD_SECURITY_LEVELS.find((l) => l === value);
  if (level === undefined) throw new KubernetesSettingsError(`QM_KUBE_NAMESPACE_POD_SECURITY=${value} must be one of ${POD_SECURITY_LEVELS.join(', ')}`);
  return level;
}

export function kubernetesSettingsFromEnv(env: Record<string, string | undefined>, serviceAccountFile = SERVICE_ACCOUNT_NAMESPACE_FILE): KubernetesSettings {
  const namespace = dnsLabel(env, 'QM_KUBE_NAMESPACE', 'default');
  const schedulerName = env['QM_KUBE_SCHEDULER_NAME']?.trim() || 'quartermaster';
  const policy = env['QM_KUBE_REPLICA_FAILURE']?.trim() || 'fail';
  if (policy !== 'fail' && policy !== 'requeue') throw new KubernetesSettingsError(`QM_KUBE_REPLICA_FAILURE=${policy} must be fail or requeue`);
  const grace = env['QM_KUBE_GRACE_SECONDS']?.trim();
  return {
    namespace,
    schedulerName,
    gracePeriodSeconds: grace === undefined || grace === '' ? undefined : integer(env, 'QM_KUBE_GRACE_SECONDS', 0, 0),
    replicaFailure: policy,
    nodeSyncDebounceMs: integer(env, 'QM_KUBE_NODE_SYNC_DEBOUNCE_MS', 100, 0),
    flavorRefreshMs: integer(env, 'QM_KUBE_FLAVOR_REFRESH_MS', 5000, 100),
    importEveryMs: integer(env, 'QM_KUBE_IMPORT_EVERY_MS', 1000, 0),
    leaderLease: leaderLease(env['QM_KUBE_LEADER_LEASE']?.trim()),
    extenderSchedulerNames: schedulerNames(env['QM_EXTENDER_SCHEDULER_NAMES']),
    leaderLeaseNamespace: dnsLabel(env, 'QM_KUBE_LEADER_LEASE_NAMESPACE', namespace),
    ownNamespace: ownNamespace(env, serviceAccountFile),
    createNamespaces: flag(env, 'QM_KUBE_CREATE_NAMESPACES'),
    namespacePodSecurity: podSecurityLevel(env['QM_KUBE_NAMESPACE_POD_SECURITY']),
    unlabelledAcceleratorPods: unlabelledPods(env['QM_EXTENDER_UNLABELLED_ACCELERATOR_PODS']),
  };
}
