import { CoreV1Api, type KubeConfig, type V1Service } from '@kubernetes/client-node';
import { KubeApiError, apiStatusOf } from './errors.js';
import { LABEL_JOB_ID, LABEL_MANAGED_BY, MANAGED_BY_VALUE } from './labels.js';

/** torchrun's default rendezvous port; a job's template env `MASTER_PORT` overrides it. */
export const DEFAULT_MASTER_PORT = 29500;

/** How the replicas of a multi-pod gang find each other: a headless Service and stable pod hostnames. */
export interface Rendezvous {
  /** The headless Service: the pods' `subdomain`. */
  service: string;
  namespace: string;
  port: number;
  /** Replicas the admission placed (the gang's size: an elastic gang may run with fewer than asked). */
  replicas: number;
}

/** `qm-<job id>`: a DNS-1035 label (starts with a letter, ≤ 63), one per job. */
export function rendezvousServiceName(jobId: string): string {
  const id = jobId.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '');
  return `qm-${id}`.slice(0, 63).replace(/-+$/, '');
}

/** `<job name, ≤ 50>-<replica>`: the pod's hostname inside the Service (a DNS label). */
export function replicaHostname(jobName: string, replica: number): string {
  const prefix = jobName.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 50).replace(/-+$/, '');
  return prefix === '' ? `replica-${replica}` : `${prefix}-${replica}`;
}

/** The DNS name replica `replica` is reached at from its peers (resolved through the pods' search path, as JobSet's). */
export function replicaAddress(jobName: string, replica: number, rendezvous: Pick<Rendezvous, 'service'>): string {
  return `${replicaHostname(jobName, replica)}.${rendezvous.service}`;
}

/**
 * What the launcher of replica `replica` needs, torchrun's names and Kubeflow's `PET_*` (which torchrun reads
 * as its arguments, so a bare `torchrun train.py` joins the gang): `MASTER_ADDR`/`MASTER_PORT` (replica 0),
 * `NNODES`/`PET_NNODES` (pods), `NODE_RANK`/`PET_NODE_RANK` (this pod), `LOCAL_WORLD_SIZE`/`PET_NPROC_PER_NODE`
 * (one process per accelerator, at least 1), `WORLD_SIZE` (processes in the gang) and `RANK` (global rank of this
 * pod's first process). A single replica rendezvouses with itself on localhost.
 */
export function rendezvousEnv(job: { name: string; acceleratorsPerReplica: number }, replica: number, rendezvous: Rendezvous): Record<string, string> {
  const perPod = Math.max(1, job.acceleratorsPerReplica);
  const master = rendezvous.replicas > 1 ? replicaAddress(job.name, 0, rendezvous) : 'localhost';
  const port = String(rendezvous.port);
  return {
    MASTER_ADDR: master,
    MASTER_PORT: port,
    NNODES: String(rendezvous.replicas),
    NODE_RANK: String(replica),
    LOCAL_WORLD_SIZE: String(perPod),
    WORLD_SIZE: String(rendezvous.replicas * perPod),
    RANK: String(replica * perPod),
    PET_MASTER_ADDR: master,
    PET_MASTER_PORT: port,
    PET_NNODES: String(rendezvous.replicas),
    PET_NODE_RANK: String(replica),
    PET_NPROC_PER_NODE: String(perPod),
  };
}

/**
 * The gang's headless Service: no cluster IP, selects the job's pods, and publishes them before they are
 * Ready (peers must resolve each other while they start), so `<hostname>.<service>` resolves to each pod.
 */
export function rendezvousServiceManifest(jobId: string, rendezvous: Rendezvous): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: rendezvous.service,
      namespace: rendezvous.namespace,
      labels: { [LABEL_MANAGED_BY]: MANAGED_BY_VALUE, [LABEL_JOB_ID]: jobId },
    },
    spec: {
      clusterIP: 'None',
      selector: { [LABEL_JOB_ID]: jobId },
      publishNotReadyAddresses: true,
      ports: [{ name: 'rendezvous', port: rendezvous.port, protocol: 'TCP' }],
    },
  };
}

/** Creates the gang's Service; one that exists already (a retried bind) is fine. */
export async function ensureRendezvousService(kubeConfig: KubeConfig, jobId: string, rendezvous: Rendezvous): Promise<'created' | 'exists'> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  try {
    await core.createNamespacedService({ namespace: rendezvous.namespace, body: rendezvousServiceManifest(jobId, rendezvous) });
    return 'created';
  } catch (error) {
    if (apiStatusOf(error) === 409) return 'exists';
    throw KubeApiError.from(`create service ${rendezvous.namespace}/${rendezvous.service}`, error);
  }
}

/** Deletes the job's Service, if any (gone already → 'not-found'). */
export async function deleteRendezvousService(kubeConfig: KubeConfig, jobId: string, namespace: string): Promise<'deleted' | 'not-found'> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const name = rendezvousServiceName(jobId);
  try {
    await core.deleteNamespacedService({ name, namespace });
    return 'deleted';
  } catch (error) {
    if (apiStatusOf(error) === 404) return 'not-found';
    throw KubeApiError.from(`delete service ${namespace}/${name}`, error);
  }
}
