import type { V1EnvVar, V1Pod, V1PodSecurityContext, V1SecurityContext, V1Toleration, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import {
  ANNOTATION_FLAVOR,
  ANNOTATION_GANG_SIZE,
  ANNOTATION_PRIORITY,
  DEFAULT_SCHEDULER_NAME,
  LABEL_GANG,
  LABEL_JOB_ID,
  LABEL_MANAGED_BY,
  LABEL_REPLICA,
  LABEL_ROLE,
  LABEL_TEAM,
  MANAGED_BY_VALUE,
} from './labels.js';
import { rendezvousEnv, replicaHostname, type Rendezvous } from './rendezvous.js';

/** The pod template of a job, as POST /v1/jobs takes it. */
export interface JobPodTemplate {
  image: string;
  command?: string[];
  args?: string[];
  env?: Record<string, string>;
  cpuMillis?: number;
  memoryMiB?: number;
  /** Pod volumes (validated by the API: persistentVolumeClaim, configMap, secret, emptyDir, nfs). */
  volumes?: V1Volume[];
  /** Mounts of those volumes into the container. */
  volumeMounts?: V1VolumeMount[];
  /** Names of Secrets in the job's namespace to pull the image with. */
  imagePullSecrets?: string[];
  /** Added to the toleration of the flavor's resource taint. */
  tolerations?: V1Toleration[];
  serviceAccountName?: string;
  /** Mount the ServiceAccount's token into the pods (default false: a job's pods get no API credential unless asked). */
  automountServiceAccountToken?: boolean;
  /** Node labels the pods need, besides the flavor's (the core placed the job only on nodes carrying them). */
  nodeSelector?: Record<string, string>;
}

const isArray = <T>(value: unknown): value is T[] => Array.isArray(value);

/**
 * The pod template of a job as stored with it (the JSON the API validated at submission), read back field
 * by field: a field of the wrong shape is left out rather than trusted.
 */
export function podTemplateOf(stored: Record<string, unknown>): JobPodTemplate {
  const env = stored['env'];
  const template: JobPodTemplate = { image: typeof stored['image'] === 'string' ? stored['image'] : '' };
  if (isArray<string>(stored['command'])) template.command = stored['command'];
  if (isArray<string>(stored['args'])) template.args = stored['args'];
  if (typeof env === 'object' && env !== null && !Array.isArray(env)) template.env = env as Record<string, string>;
  if (typeof stored['cpuMillis'] === 'number') template.cpuMillis = stored['cpuMillis'];
  if (typeof stored['memoryMiB'] === 'number') template.memoryMiB = stored['memoryMiB'];
  if (isArray<V1Volume>(stored['volumes'])) template.volumes = stored['volumes'];
  if (isArray<V1VolumeMount>(stored['volumeMounts'])) template.volumeMounts = stored['volumeMounts'];
  if (isArray<string>(stored['imagePullSecrets'])) template.imagePullSecrets = stored['imagePullSecrets'];
  if (isArray<V1Toleration>(stored['tolerations'])) template.tolerations = stored['tolerations'];
  if (typeof stored['serviceAccountName'] === 'string') template.serviceAccountName = stored['serviceAccountName'];
  if (stored['automountServiceAccountToken'] === true) template.automountServiceAccountToken = true;
  const selector = stored['nodeSelector'];
  if (typeof selector === 'object' && selector !== null && !Array.isArray(selector) && Object.values(selector).every((v) => typeof v === 'string')) {
    template.nodeSelector = selector as Record<string, string>;
  }
  return template;
}

/** What a replica's pod is made from: an admitted job and its flavor. */
export interface PodJob {
  id: string;
  name: string;
  team: string;
  priority?: number;
  /** Admitted replica count (the gang's size). */
  replicas: number;
  acceleratorsPerReplica: number;
  template: JobPodTemplate;
  /** Seconds the kubelet waits between SIGTERM and SIGKILL (the job's checkpoint grace period); absent = Kubernetes' default. */
  terminationGracePeriodSeconds?: number;
  /** The admitted flavor: its name, extended resource, and node labels (used as nodeSelector). */
  flavor: { name: string; resourceName: string; nodeLabels?: Record<string, string> };
  /**
   * In a multi-role job: the replica's role and its index among that role's replicas (env QM_ROLE,
   * QM_ROLE_INDEX, label quartermaster.io/role). `acceleratorsPerReplica` and the template's CPU and memory are
   * then that role's; a role without accelerators is not pinned to the flavor's nodes.
   */
  role?: { name: string; index: number };
}

export interface PodManifestOptions {
  namespace?: string;
  schedulerName?: string;
  /** The gang's rendezvous: the pod gets a stable hostname in its headless Service and the launcher's env. */
  rendezvous?: Rendezvous;
  /**
   * The namespace enforces Pod Security `restricted`: the pod runs as non-root, with the runtime's default
   * seccomp profile, no privilege escalation and no capabilities (an image whose user is root then fails to start,
   * saying so).
   */
  restricted?: boolean;
}

/** The pod and container securityContext that Pod Security `restricted` asks for. */
const RESTRICTED_POD: V1PodSecurityContext = { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } };
const RESTRICTED_CONTAINER: V1SecurityContext = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } };

export class PodManifestError extends Error {
  constructor(
    readonly field: string,
    reason: string,
  ) {
    super(`cannot build pod manifest: ${field} ${reason}`);
    this.name = 'PodManifestError';
  }
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

function sanitizeForName(value: string): string {
  return value.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '');
}

/** `<job name, ≤ 40>-<job id>-<replica>`: deterministic, so creating it twice is idempotent. */
export function podNameForReplica(job: Pick<PodJob, 'id' | 'name'>, replica: number): string {
  const prefix = sanitizeForName(job.name).slice(0, 40).replace(/-+$/, '');
  const id = sanitizeForName(job.id);
  if (!id) throw new PodManifestError('job.id', 'has no character usable in a pod name');
  const name = [prefix, id, String(replica)].filter((part) => part !== '').join('-');
  if (name.length > 253) throw new PodManifestError('job.id', 'is too long for a pod name');
  return name;
}

function requireInteger(field: string, value: number | undefined, min: number): void {
  if (value === undefined) return;
  if (!Number.isInteger(value) || value < min) throw new PodManifestError(field, `must be an integer ≥ ${min}`);
}

function validate(job: PodJob, replica: number, namespace: string): void {
  requireInteger('job.replicas', job.replicas, 1);
  requireInteger('replica', replica, 0);
  if (replica >= job.replicas) throw new PodManifestError('replica', `must be < job.replicas (${job.replicas})`);
  requireInteger('job.acceleratorsPerReplica', job.acceleratorsPerReplica, 0);
  requireInteger('job.template.cpuMillis', job.template.cpuMillis, 0);
  requireInteger('job.template.memoryMiB', job.template.memoryMiB, 0);
  requireInteger('job.terminationGracePeriodSeconds', job.terminationGracePeriodSeconds, 0);
  if (job.priority !== undefined && !Number.isInteger(job.priority)) {
    throw new PodManifestError('job.priority', 'must be an integer');
  }
  if (!job.template.image?.trim()) throw new PodManifestError('job.template.image', 'must not be empty');
  if (!DNS_LABEL.test(namespace)) throw new PodManifestError('namespace', 'must be a DNS label');
  for (const [field, value] of [
    ['job.id', job.id],
    ['job.team', job.team],
  ] as const) {
    if (!value || value.length > 63 || !LABEL_VALUE.test(value)) {
      throw new PodManifestError(field, 'must be a valid label value (≤ 63 alphanumerics, -, _ or .)');
    }
  }
  for (const key of Object.keys(job.template.env ?? {})) {
    if (!ENV_NAME.test(key)) throw new PodManifestError(`job.template.env.${key}`, 'is not a valid variable name');
  }
  if (!job.flavor.resourceName) throw new PodManifestError('job.flavor.resourceName', 'must not be empty');
}

/**
 * The pod of one replica of an admitted gang. Pure: same input, same manifest.
 *
 * The pod names `quartermaster` (or `options.schedulerName`) as its scheduler, so the default scheduler
 * leaves it alone; Quartermaster binds it through the pods/binding subresource. With `node`, the pod is
 * created already bound (`spec.nodeName`), for callers that place pods without a separate binding step.
 * Accelerators are requested (and limited, as Kubernetes requires for extended resources) in the flavor's
 * resourceName; the pod tolerates the taint GPU/accelerator node pools conventionally carry for it and
 * selects the flavor's node labels and the template's nodeSelector. Replica identity is also in the environment (`QM_JOB_ID`,
 * `QM_REPLICA_INDEX`, `QM_GANG_SIZE`) for distributed launchers; with `options.rendezvous` the pod gets the
 * hostname `<job name>-<replica>` in the gang's headless Service and torchrun's variables (rendezvous.ts);
 * the template's env wins on a clash. The template's volumes, mounts, pull secrets, tolerations and service
 * account are carried over as given. A job that checkpoints gets its grace period as the pod's
 * `terminationGracePeriodSeconds`, so any deletion (a node drain too) leaves it time to checkpoint.
 */
export function podManifestForReplica(
  job: PodJob,
  replica: number,
  node?: string,
  options: PodManifestOptions = {},
): V1Pod {
  const namespace = options.namespace ?? 'default';
  validate(job, replica, namespace);
  if (node !== undefined && !node) throw new PodManifestError('node', 'must not be empty when given');
  const { template } = job;

  const labels: Record<string, string> = {
    [LABEL_MANAGED_BY]: MANAGED_BY_VALUE,
    [LABEL_JOB_ID]: job.id,
    [LABEL_TEAM]: job.team,
    [LABEL_GANG]: job.id,
    [LABEL_REPLICA]: String(replica),
    ...(job.role ? { [LABEL_ROLE]: job.role.name } : {}),
  };
  const annotations: Record<string, string> = {
    [LABEL_JOB_ID]: job.id,
    [LABEL_TEAM]: job.team,
    [LABEL_GANG]: job.id,
    [LABEL_REPLICA]: String(replica),
    [ANNOTATION_GANG_SIZE]: String(job.replicas),
    [ANNOTATION_FLAVOR]: job.flavor.name,
    ...(job.priority === undefined ? {} : { [ANNOTATION_PRIORITY]: String(job.priority) }),
  };

  const builtIn: Record<string, string> = {
    QM_JOB_ID: job.id,
    QM_REPLICA_INDEX: String(replica),
    QM_GANG_SIZE: String(job.replicas),
    ...(job.role ? { QM_ROLE: job.role.name, QM_ROLE_INDEX: String(job.role.index) } : {}),
  };
  const rendezvous = options.rendezvous ? rendezvousEnv(job, replica, options.rendezvous) : {};
  const envMap = { ...builtIn, ...rendezvous, ...(template.env ?? {}) };
  const env: V1EnvVar[] = Object.entries(envMap).map(([name, value]) => ({ name, value }));

  const requests: Record<string, string> = {};
  const limits: Record<string, string> = {};
  if (template.cpuMillis) requests.cpu = `${template.cpuMillis}m`;
  if (template.memoryMiB) requests.memory = `${template.memoryMiB}Mi`;
  if (job.acceleratorsPerReplica > 0) {
    requests[job.flavor.resourceName] = String(job.acceleratorsPerReplica);
    limits[job.flavor.resourceName] = String(job.acceleratorsPerReplica);
  }

  // A CPU-only role of a multi-role job may be placed off the flavor's nodes (ADR 0024): not pinned to them.
  const pinned = job.role === undefined || job.acceleratorsPerReplica > 0;
  const nodeSelector = { ...(template.nodeSelector ?? {}), ...(pinned ? (job.flavor.nodeLabels ?? {}) : {}) };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: podNameForReplica(job, replica), namespace, labels, annotations },
    spec: {
      schedulerName: options.schedulerName ?? DEFAULT_SCHEDULER_NAME,
      restartPolicy: 'Never',
      ...(job.terminationGracePeriodSeconds === undefined ? {} : { terminationGracePeriodSeconds: job.terminationGracePeriodSeconds }),
      ...(node === undefined ? {} : { nodeName: node }),
      ...(Object.keys(nodeSelector).length > 0 ? { nodeSelector: { ...nodeSelector } } : {}),
      ...(options.rendezvous ? { hostname: replicaHostname(job.name, replica), subdomain: options.rendezvous.service } : {}),
      ...(template.serviceAccountName ? { serviceAccountName: template.serviceAccountName } : {}),
      // Only a template that names its ServiceAccount and asks for it (the API checks both) gets its token.
      automountServiceAccountToken: template.automountServiceAccountToken === true && template.serviceAccountName !== undefined,
      ...(template.imagePullSecrets && template.imagePullSecrets.length > 0 ? { imagePullSecrets: template.imagePullSecrets.map((name) => ({ name })) } : {}),
      ...(template.volumes && template.volumes.length > 0 ? { volumes: structuredClone(template.volumes) } : {}),
      tolerations: [{ key: job.flavor.resourceName, operator: 'Exists', effect: 'NoSchedule' }, ...structuredClone(template.tolerations ?? [])],
      ...(options.restricted ? { securityContext: structuredClone(RESTRICTED_POD) } : {}),
      containers: [
        {
          name: 'main',
          image: template.image,
          ...(template.command && template.command.length > 0 ? { command: [...template.command] } : {}),
          ...(template.args && template.args.length > 0 ? { args: [...template.args] } : {}),
          ...(template.volumeMounts && template.volumeMounts.length > 0 ? { volumeMounts: structuredClone(template.volumeMounts) } : {}),
          env,
          ...(options.restricted ? { securityContext: structuredClone(RESTRICTED_CONTAINER) } : {}),
          resources: {
            ...(Object.keys(requests).length > 0 ? { requests } : {}),
            ...(Object.keys(limits).length > 0 ? { limits } : {}),
          },
        },
      ],
    },
  };
}
