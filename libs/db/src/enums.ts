/**
 * The Prisma client names enum values containing `-` with `_` (the database stores the API's spelling).
 * These convert between the client's names and the core's / API's values.
 */
import type { FlavorKind, JobKind } from '#core';
import type { FlavorKind as DbFlavorKind, JobKind as DbJobKind } from './generated/prisma/enums.js';

const FLAVOR_KIND_TO_DB: Readonly<Record<FlavorKind, DbFlavorKind>> = {
  'nvidia-gpu': 'nvidia_gpu',
  'aws-trainium': 'aws_trainium',
  'intel-gaudi': 'intel_gaudi',
  'google-tpu': 'google_tpu',
};
const JOB_KIND_TO_DB: Readonly<Record<JobKind, DbJobKind>> = {
  training: 'training',
  eval: 'eval',
  'batch-inference': 'batch_inference',
  serving: 'serving',
};

const FLAVOR_KIND_FROM_DB = invert(FLAVOR_KIND_TO_DB);
const JOB_KIND_FROM_DB = invert(JOB_KIND_TO_DB);

export function flavorKindToDb(kind: FlavorKind): DbFlavorKind {
  return FLAVOR_KIND_TO_DB[kind];
}
export function flavorKindFromDb(kind: DbFlavorKind): FlavorKind {
  return FLAVOR_KIND_FROM_DB[kind];
}
export function jobKindToDb(kind: JobKind): DbJobKind {
  return JOB_KIND_TO_DB[kind];
}
export function jobKindFromDb(kind: DbJobKind): JobKind {
  return JOB_KIND_FROM_DB[kind];
}

function invert<K extends string, V extends string>(map: Readonly<Record<K, V>>): Readonly<Record<V, K>> {
  return Object.fromEntries(Object.entries(map).map(([k, v]) => [v, k])) as Record<V, K>;
}
