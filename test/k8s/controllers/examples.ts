// The upstream projects' own minimal examples, as the workload tests apply them. Where the module ships the
// sample (KubeRay's and LWS's config/samples) it is read from the built module's manifests; the others are
// copied here from their documentation, with the source named. Helpers add what a team adds: the team label
// (and, without the kube-scheduler extender, `schedulerName: quartermaster` in the pod templates).
import { readFileSync } from 'node:fs';
import type { KubernetesObject, V1PodTemplateSpec } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import type { RunningControllers } from './controllers.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- manifests are free-form JSON
export type Manifest = KubernetesObject & { spec?: any };

function load(path: string): Manifest[] {
  return parseAllDocuments(readFileSync(path, 'utf8'))
    .map((doc) => doc.toJS() as Manifest | null)
    .filter((o): o is Manifest => !!o?.kind);
}

const clone = <T>(value: T): T => structuredClone(value);

export const examples = {
  /** kubernetes/website content/en/examples/application/job/indexed-job.yaml */
  indexedJob(): Manifest {
    const volume = [{ mountPath: '/input', name: 'input' }];
    return {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'indexed-job' },
      spec: {
        completions: 5,
        parallelism: 3,
        completionMode: 'Indexed',
        template: {
          spec: {
            restartPolicy: 'Never',
            initContainers: [
              { name: 'input', image: 'docker.io/library/bash', command: ['bash', '-c', 'items=(foo bar baz qux xyz)\necho ${items[$JOB_COMPLETION_INDEX]} > /input/data.txt\n'], volumeMounts: volume },
            ],
            containers: [{ name: 'worker', image: 'docker.io/library/busybox', command: ['rev', '/input/data.txt'], volumeMounts: volume }],
            volumes: [{ name: 'input', emptyDir: {} }],
          },
        },
      },
    };
  },
  /** kubernetes-sigs/jobset site/static/examples/simple/paralleljobs.yaml */
  parallelJobs(): Manifest {
    const job = (parallelism: number) => ({
      spec: { parallelism, completions: parallelism, backoffLimit: 0, template: { spec: { containers: [{ name: 'sleep', image: 'busybox', command: ['sleep'], args: ['100s'] }] } } },
    });
    return {
      apiVersion: 'jobset.x-k8s.io/v1alpha2',
      kind: 'JobSet',
      metadata: { name: 'paralleljobs' },
      spec: { replicatedJobs: [{ name: 'workers', template: job(4) }, { name: 'driver', template: job(1) }] },
    };
  },
  /** kubernetes-sigs/lws config/samples/leaderworkerset_v1_leaderworkerset.yaml (from the module). */
  leaderWorkerSetSample(controllers: RunningControllers): Manifest[] {
    return load(controllers.manifests('lws', 'config/samples/leaderworkerset_v1_leaderworkerset.yaml'));
  },
  /** ray-project/kuberay ray-operator/config/samples/ray-cluster.sample.yaml (from the module). */
  rayClusterSample(controllers: RunningControllers): Manifest[] {
    return load(controllers.manifests('kuberay', 'config/samples/ray-cluster.sample.yaml'));
  },
  /** ray-project/kuberay ray-operator/config/samples/ray-job.sample.yaml (from the module): the RayJob and its ConfigMap. */
  rayJobSample(controllers: RunningControllers): Manifest[] {
    return load(controllers.manifests('kuberay', 'config/samples/ray-job.sample.yaml'));
  },
  /** kubeflow/trainer docs, "Getting started": a TrainJob on the torch-distributed ClusterTrainingRuntime. */
  trainJob(): Manifest {
    return {
      apiVersion: 'trainer.kubeflow.org/v1alpha1',
      kind: 'TrainJob',
      metadata: { name: 'pytorch-simple' },
      spec: { runtimeRef: { name: 'torch-distributed' }, trainer: { numNodes: 2 } },
    };
  },
};

/** The pod templates of a workload manifest (for the kinds the tests use), to edit in place. */
export function podTemplates(object: Manifest): V1PodTemplateSpec[] {
  type Group = { template: V1PodTemplateSpec };
  type Cluster = { headGroupSpec: Group; workerGroupSpecs: Group[] };
  const spec = object.spec as Record<string, unknown>;
  const ray = (cluster: Cluster): V1PodTemplateSpec[] => [cluster.headGroupSpec.template, ...cluster.workerGroupSpecs.map((g) => g.template)];
  switch (object.kind ?? '') {
    case 'Job':
      return [spec.template as V1PodTemplateSpec];
    case 'JobSet':
      return (spec.replicatedJobs as { template: { spec: Group } }[]).map((rj) => rj.template.spec.template);
    case 'RayCluster':
      return ray(spec as unknown as Cluster);
    case 'RayJob':
      return ray(spec.rayClusterSpec as Cluster);
    case 'LeaderWorkerSet': {
      const lwt = spec.leaderWorkerTemplate as { workerTemplate: V1PodTemplateSpec; leaderTemplate?: V1PodTemplateSpec };
      return [lwt.workerTemplate, ...(lwt.leaderTemplate ? [lwt.leaderTemplate] : [])];
    }
    default:
      return [];
  }
}

export interface TeamOptions {
  team: string;
  /** Name of the scheduler the pods ask for (omit in extender mode: kube-scheduler asks Quartermaster). */
  schedulerName?: string;
  /** Label quartermaster.io/priority-class: a class the team may choose (define it first: support/workloads teamPriorityClass). */
  priorityClass?: string;
  /** `resources.limits` added to every container of every pod template, e.g. `{ 'nvidia.com/gpu': '8' }`. */
  limits?: Record<string, string>;
  name?: string;
}

/** The manifest as a team submits it to Quartermaster: the team label on the workload, nothing else but `options`. */
export function forTeam(object: Manifest, options: TeamOptions): Manifest {
  const copy = clone(object);
  copy.metadata = { ...copy.metadata, ...(options.name ? { name: options.name } : {}), labels: { ...copy.metadata?.labels, 'quartermaster.io/team': options.team } };
  if (options.priorityClass !== undefined) copy.metadata.labels!['quartermaster.io/priority-class'] = options.priorityClass;
  for (const template of podTemplates(copy)) {
    if (options.schedulerName) template.spec!.schedulerName = options.schedulerName;
    if (options.limits) {
      for (const container of template.spec!.containers) {
        container.resources = { ...container.resources, limits: { ...container.resources?.limits, ...options.limits } };
      }
    }
  }
  return copy;
}
