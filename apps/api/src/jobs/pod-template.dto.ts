// The Kubernetes parts of a job's pod template (POST /v1/jobs `template`): volumes and their mounts, image
// pull secrets, tolerations and the service account. Only what a training job needs, each field checked as the
// API server would, so a bad template is a 400 naming the field instead of pods Kubernetes refuses later.
import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsObject, Matches, MaxLength, ValidateNested } from 'class-validator';
import type { FieldError } from '#common';
import { LABEL_KEY, LABEL_VALUE } from '../flavors/flavor.dto.js';
import { IntIn, IsBool, IsName, IsStringMap, IsText, OneOf, Optional, Required } from '../validation/validators.js';

/** DNS-1123 subdomain (Secret, ConfigMap, PVC and ServiceAccount names). */
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const SUBDOMAIN_MESSAGE = "must be a DNS-1123 subdomain (lower-case letters, digits, '-' and '.', at most 253 characters)";
const IsObjectName = (): PropertyDecorator =>
  applyDecorators(IsText(1, 253), Matches(SUBDOMAIN, { message: SUBDOMAIN_MESSAGE }));
/** A Kubernetes quantity such as `64Gi` or `500M`. */
const QUANTITY = /^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/;

export const TEMPLATE_LIMITS = { volumes: 64, volumeMounts: 64, imagePullSecrets: 16, tolerations: 32, nodeSelector: 32 } as const;

export class PersistentVolumeClaimSourceDto {
  @ApiProperty({ example: 'datasets' })
  @Required()
  @IsObjectName()
  claimName!: string;

  @ApiPropertyOptional({ default: false, description: 'Mount the claim read-only.' })
  @Optional()
  @IsBool()
  readOnly?: boolean;
}

export class ConfigMapSourceDto {
  @ApiProperty({ example: 'train-config' })
  @Required()
  @IsObjectName()
  name!: string;

  @ApiPropertyOptional({ default: false, description: 'Start the pods even when the ConfigMap does not exist.' })
  @Optional()
  @IsBool()
  optional?: boolean;
}

export class SecretSourceDto {
  @ApiProperty({ example: 'wandb-key' })
  @Required()
  @IsObjectName()
  secretName!: string;

  @ApiPropertyOptional({ default: false, description: 'Start the pods even when the Secret does not exist.' })
  @Optional()
  @IsBool()
  optional?: boolean;
}

export class EmptyDirSourceDto {
  @ApiPropertyOptional({ enum: ['', 'Memory'], description: "'Memory' for a tmpfs (e.g. /dev/shm for NCCL)." })
  @Optional()
  @OneOf(['', 'Memory'])
  medium?: '' | 'Memory';

  @ApiPropertyOptional({ example: '64Gi' })
  @Optional()
  @IsText(1, 32)
  @Matches(QUANTITY, { message: "must be a Kubernetes quantity such as '64Gi'" })
  sizeLimit?: string;
}

export class NfsSourceDto {
  @ApiProperty({ example: 'fs-0a1b2c.efs.us-west-2.amazonaws.com' })
  @Required()
  @IsText(1, 253)
  server!: string;

  @ApiProperty({ example: '/exports/checkpoints' })
  @Required()
  @IsText(1, 4096)
  @Matches(/^\//, { message: "must be an absolute path (start with '/')" })
  path!: string;

  @ApiPropertyOptional({ default: false, description: 'Mount the export read-only.' })
  @Optional()
  @IsBool()
  readOnly?: boolean;
}

const SOURCES = ['persistentVolumeClaim', 'configMap', 'secret', 'emptyDir', 'nfs'] as const;

// `type: () => type()`, not `{ type }`: @nestjs/swagger takes a function for a lazy type only when it is
// named `type` (as an arrow function written in the `type` property is); the thunk passed in is anonymous,
// and was documented as a class without a name (`$ref: '#/components/schemas/'`).
const Source = <T>(type: () => new () => T): PropertyDecorator =>
  applyDecorators(ApiPropertyOptional({ type: () => type() }), Optional(), IsObject({ message: 'must be an object' }), ValidateNested(), Type(type));

/** One pod volume: a name and exactly one source. */
export class VolumeDto {
  @ApiProperty({ example: 'data' })
  @Required()
  @IsName()
  name!: string;

  @Source(() => PersistentVolumeClaimSourceDto)
  persistentVolumeClaim?: PersistentVolumeClaimSourceDto;

  @Source(() => ConfigMapSourceDto)
  configMap?: ConfigMapSourceDto;

  @Source(() => SecretSourceDto)
  secret?: SecretSourceDto;

  @Source(() => EmptyDirSourceDto)
  emptyDir?: EmptyDirSourceDto;

  @Source(() => NfsSourceDto)
  nfs?: NfsSourceDto;
}

export class VolumeMountDto {
  @ApiProperty({ example: 'data', description: 'Name of one of template.volumes.' })
  @Required()
  @IsName()
  name!: string;

  @ApiProperty({ example: '/data' })
  @Required()
  @IsText(1, 4096)
  @Matches(/^\/[^:]*$/, { message: "must be an absolute path (start with '/') without ':'" })
  mountPath!: string;

  @ApiPropertyOptional({ default: false })
  @Optional()
  @IsBool()
  readOnly?: boolean;

  @ApiPropertyOptional({ example: 'llama', description: 'Path inside the volume (relative, no ..).' })
  @Optional()
  @IsText(1, 4096)
  @Matches(/^(?!\/)(?!.*(^|\/)\.\.(\/|$)).*$/, { message: "must be a relative path without '..'" })
  subPath?: string;
}

export class TolerationDto {
  @ApiPropertyOptional({ example: 'cloud.google.com/gke-spot', description: 'Empty with operator Exists: every taint.' })
  @Optional()
  @IsText(0, 317)
  @Matches(new RegExp(`(^$)|${LABEL_KEY.source}`), { message: 'must be a Kubernetes label key' })
  key?: string;

  @ApiPropertyOptional({ enum: ['Exists', 'Equal'], default: 'Equal' })
  @Optional()
  @OneOf(['Exists', 'Equal'])
  operator?: 'Exists' | 'Equal';

  @ApiPropertyOptional({ example: 'true' })
  @Optional()
  @IsText(0, 63)
  @Matches(LABEL_VALUE, { message: 'must be a valid label value' })
  value?: string;

  @ApiPropertyOptional({ enum: ['NoSchedule', 'PreferNoSchedule', 'NoExecute'], description: 'Empty: every effect.' })
  @Optional()
  @OneOf(['NoSchedule', 'PreferNoSchedule', 'NoExecute'])
  effect?: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';

  @ApiPropertyOptional({ example: 300, description: 'Only with effect NoExecute.' })
  @Optional()
  @IntIn(0, 31_536_000)
  tolerationSeconds?: number;
}

/** Decorators of the array fields of JobTemplateDto. */
export const ArrayOf = <T>(max: number, type: () => new () => T): PropertyDecorator =>
  applyDecorators(
    Optional(),
    IsArray({ message: 'must be an array' }),
    ArrayMaxSize(max, { message: `must have at most ${max} items` }),
    IsObject({ each: true, message: 'items must be objects' }),
    ValidateNested({ each: true }),
    Type(type),
  );

export const NameList = (max: number): PropertyDecorator =>
  applyDecorators(
    Optional(),
    IsArray({ message: 'must be an array of names' }),
    ArrayMaxSize(max, { message: `must have at most ${max} items` }),
    MaxLength(253, { each: true, message: SUBDOMAIN_MESSAGE }),
    Matches(SUBDOMAIN, { each: true, message: `each ${SUBDOMAIN_MESSAGE}` }),
  );

export const ObjectName = (): PropertyDecorator => applyDecorators(Optional(), IsObjectName());

/** A nodeSelector: label key → value, as Kubernetes checks them. */
export const NodeSelector = (): PropertyDecorator =>
  applyDecorators(
    Optional(),
    IsStringMap({ maxEntries: TEMPLATE_LIMITS.nodeSelector, keyPattern: LABEL_KEY, keyHint: 'is not a Kubernetes label key', maxKeyLength: 317, maxValueLength: 63, valuePattern: LABEL_VALUE }),
  );

/** What the pod template needs beyond each field's own rules; every problem with its field. */
export function podTemplateProblems(t: {
  volumes?: VolumeDto[];
  volumeMounts?: VolumeMountDto[];
  tolerations?: TolerationDto[];
  env?: Record<string, string>;
}): FieldError[] {
  const errors: FieldError[] = [];
  const names = new Set<string>();
  (t.volumes ?? []).forEach((v, i) => {
    const sources = SOURCES.filter((s) => v[s] !== undefined);
    if (sources.length !== 1) {
      errors.push({ field: `template.volumes[${i}]`, message: `must have exactly one source (${SOURCES.join(', ')}); has ${sources.length === 0 ? 'none' : sources.join(', ')}` });
    }
    if (names.has(v.name)) errors.push({ field: `template.volumes[${i}].name`, message: `repeats volume name '${v.name}'` });
    names.add(v.name);
  });
  const paths = new Set<string>();
  (t.volumeMounts ?? []).forEach((m, i) => {
    if (!names.has(m.name)) errors.push({ field: `template.volumeMounts[${i}].name`, message: `'${m.name}' is not the name of one of template.volumes` });
    const path = m.mountPath.replace(/\/+$/, '') || '/';
    if (paths.has(path)) errors.push({ field: `template.volumeMounts[${i}].mountPath`, message: `repeats mount path '${m.mountPath}'` });
    paths.add(path);
  });
  (t.tolerations ?? []).forEach((tol, i) => {
    if (tol.operator === 'Exists' && tol.value) errors.push({ field: `template.tolerations[${i}].value`, message: "must be empty when operator is 'Exists'" });
    if ((tol.operator ?? 'Equal') === 'Equal' && !tol.key) errors.push({ field: `template.tolerations[${i}].key`, message: "is required unless operator is 'Exists'" });
    if (tol.tolerationSeconds !== undefined && tol.effect !== 'NoExecute') {
      errors.push({ field: `template.tolerations[${i}].tolerationSeconds`, message: "is allowed only with effect 'NoExecute'" });
    }
  });
  const port = t.env?.['MASTER_PORT'];
  if (port !== undefined && !(/^[0-9]{1,5}$/.test(port) && Number(port) >= 1 && Number(port) <= 65535)) {
    errors.push({ field: 'template.env.MASTER_PORT', message: 'must be a port number (1-65535): the gang rendezvouses on it' });
  }
  return errors;
}

/**
 * A template larger than `max` bytes as stored (its JSON in UTF-8, defaults filled in) is a problem naming
 * `template`: each field's own bounds allow far more in all (256 env values of 32 KiB), and every reader of
 * the job pays for its template (ADR 0025).
 */
export function templateSizeProblem(template: Record<string, unknown>, max: number): FieldError | null {
  const bytes = Buffer.byteLength(JSON.stringify(template), 'utf8');
  if (bytes <= max) return null;
  return {
    field: 'template',
    message: `must be at most ${max} bytes as JSON (QM_MAX_TEMPLATE_BYTES); this one is ${bytes}: pass large data in a ConfigMap or Secret volume, not in env, command or args`,
  };
}

/** The validated template parts as plain JSON (stored with the job, carried into its pods). */
export function plainPodTemplate<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
