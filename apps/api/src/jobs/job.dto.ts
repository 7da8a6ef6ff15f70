import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { JOB_KINDS } from '#core';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsIn, IsObject, IsString, Matches, MaxLength, ValidateIf, ValidateNested } from 'class-validator';
import { TPU_SHAPE } from '../nodes/node.dto.js';
import { MapProperty } from '../response.doc.js';
import { ArrayOf, NameList, NodeSelector, ObjectName, TEMPLATE_LIMITS, TolerationDto, VolumeDto, VolumeMountDto } from './pod-template.dto.js';
import { AtMost, IntIn, IsBool, IsName, IsNameList, IsSpeedMap, IsStringMap, IsText, NumberIn, OneOf, Optional, Required } from '../validation/validators.js';

export const TOPOLOGY_LEVELS = ['none', 'zone', 'block', 'domain'] as const;
export const FLAVOR_SELECTIONS = ['preference', 'fastest'] as const;

/** Bounds of a job submission (documented in docs/api-quickstart.md). */
export const JOB_LIMITS = {
  replicas: { min: 1, max: 10_000 },
  acceleratorsPerReplica: { min: 0, max: 64 },
  priority: { min: -1_000_000, max: 1_000_000 },
  flavors: { min: 1, max: 16 },
  expectedRuntimeSeconds: { min: 1, max: 365 * 24 * 3600 },
  cpuMillis: { min: 1, max: 10_000_000 },
  memoryMiB: { min: 1, max: 100_000_000 },
  roles: { max: 16 },
} as const;

/** Per-replica defaults when the template does not say. */
export const TEMPLATE_DEFAULTS = { cpuMillis: 1000, memoryMiB: 4096 } as const;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export class JobTemplateDto {
  @ApiProperty({ example: 'ghcr.io/acme/llama-ft:1.4' })
  @Required()
  @IsText(1, 1024)
  image!: string;

  @ApiPropertyOptional({ type: [String], example: ['python', 'train.py'] })
  @Optional()
  @IsArray({ message: 'must be an array of strings' })
  @ArrayMaxSize(256, { message: 'must have at most 256 items' })
  @IsString({ each: true, message: 'must contain only strings' })
  @MaxLength(8192, { each: true, message: 'items must have at most 8192 characters' })
  command?: string[];

  @ApiPropertyOptional({ type: [String], example: ['--epochs', '3'] })
  @Optional()
  @IsArray({ message: 'must be an array of strings' })
  @ArrayMaxSize(256, { message: 'must have at most 256 items' })
  @IsString({ each: true, message: 'must contain only strings' })
  @MaxLength(8192, { each: true, message: 'items must have at most 8192 characters' })
  args?: string[];

  @MapProperty('string', { required: false, example: { WANDB_PROJECT: 'llama' } })
  @Optional()
  @IsStringMap({ maxEntries: 256, keyPattern: ENV_NAME, keyHint: 'is not an environment variable name', maxKeyLength: 256, maxValueLength: 32_768 })
  env?: Record<string, string>;

  @ApiPropertyOptional({ example: 8000, description: `CPU millicores per replica (default ${TEMPLATE_DEFAULTS.cpuMillis}).` })
  @Optional()
  @IntIn(JOB_LIMITS.cpuMillis.min, JOB_LIMITS.cpuMillis.max)
  cpuMillis?: number;

  @ApiPropertyOptional({ example: 65536, description: `Memory MiB per replica (default ${TEMPLATE_DEFAULTS.memoryMiB}).` })
  @Optional()
  @IntIn(JOB_LIMITS.memoryMiB.min, JOB_LIMITS.memoryMiB.max)
  memoryMiB?: number;

  @ApiPropertyOptional({ type: () => [VolumeDto], description: 'Pod volumes: each a name and one of persistentVolumeClaim, configMap, secret, emptyDir, nfs.' })
  @ArrayOf(TEMPLATE_LIMITS.volumes, () => VolumeDto)
  volumes?: VolumeDto[];

  @ApiPropertyOptional({ type: () => [VolumeMountDto], description: 'Mounts of template.volumes into the container.' })
  @ArrayOf(TEMPLATE_LIMITS.volumeMounts, () => VolumeMountDto)
  volumeMounts?: VolumeMountDto[];

  @ApiPropertyOptional({ type: [String], example: ['registry-creds'], description: "Secrets in the job namespace to pull the image with; ones the team's podPolicy.secrets allows." })
  @NameList(TEMPLATE_LIMITS.imagePullSecrets)
  imagePullSecrets?: string[];

  @ApiPropertyOptional({ type: () => [TolerationDto], description: "Added to the toleration of the flavor's resource taint." })
  @ArrayOf(TEMPLATE_LIMITS.tolerations, () => TolerationDto)
  tolerations?: TolerationDto[];

  @ApiPropertyOptional({ example: 'trainer', description: "ServiceAccount of the pods (in the job namespace); one the team's podPolicy.serviceAccounts allows." })
  @ObjectName()
  serviceAccountName?: string;

  @ApiPropertyOptional({
    default: false,
    description: "Mount serviceAccountName's API token into the pods (needs serviceAccountName). By default pods get no token.",
  })
  @Optional()
  @IsBool()
  automountServiceAccountToken?: boolean;

  @MapProperty('string', {
    required: false,
    example: { 'topology.kubernetes.io/zone': 'us-east-1a' },
    description: "Node labels the pods need (added to the flavor's): the scheduler places the job only on nodes carrying all of them, and says so when none do.",
  })
  @NodeSelector()
  nodeSelector?: Record<string, string>;
}

export class JobTopologyDto {
  @ApiProperty({ enum: TOPOLOGY_LEVELS, default: 'none' })
  @Optional()
  @OneOf(TOPOLOGY_LEVELS)
  level?: (typeof TOPOLOGY_LEVELS)[number];

  @ApiPropertyOptional({ example: '2x4', description: 'TPU slice shape; implies level domain.' })
  @Optional()
  @IsText(1, 32)
  @Matches(TPU_SHAPE, { message: "must look like '2x4' or '4x4x4'" })
  tpuShape?: string;
}

/** Bounds of a checkpoint declaration (documented in docs/api-quickstart.md). */
export const CHECKPOINT_LIMITS = { intervalSeconds: { min: 1, max: 7 * 24 * 3600 }, gracePeriodSeconds: { min: 0, max: 3600 } } as const;

export class JobCheckpointDto {
  @ApiProperty({ example: 1800, description: 'Seconds of running between checkpoints.' })
  @Required()
  @IntIn(CHECKPOINT_LIMITS.intervalSeconds.min, CHECKPOINT_LIMITS.intervalSeconds.max)
  intervalSeconds!: number;

  @ApiPropertyOptional({ example: 60, default: 0, description: 'Seconds the job is given to checkpoint when preempted (the pods\' termination grace period).' })
  @Optional()
  @IntIn(CHECKPOINT_LIMITS.gracePeriodSeconds.min, CHECKPOINT_LIMITS.gracePeriodSeconds.max)
  gracePeriodSeconds?: number;
}

/** One role of a multi-role gang (a driver, head, launcher or leader; workers, actors, learners). */
export class JobRoleDto {
  @ApiProperty({ example: 'worker', description: 'DNS label, unique within the job.' })
  @Required()
  @IsName()
  name!: string;

  @ApiProperty({ example: 4 })
  @Required()
  @IntIn(JOB_LIMITS.replicas.min, JOB_LIMITS.replicas.max)
  replicas!: number;

  @ApiPropertyOptional({ example: 2, description: 'Elastic role: least replica count accepted (default replicas).' })
  @Optional()
  @IntIn(JOB_LIMITS.replicas.min, JOB_LIMITS.replicas.max)
  @AtMost('replicas')
  minReplicas?: number;

  @ApiProperty({ example: 8, description: 'Accelerators per replica of this role (0: a role without accelerators, never charged any).' })
  @Required()
  @IntIn(JOB_LIMITS.acceleratorsPerReplica.min, JOB_LIMITS.acceleratorsPerReplica.max)
  acceleratorsPerReplica!: number;

  @ApiPropertyOptional({ example: 8000, description: "CPU millicores per replica of this role (default the template's cpuMillis)." })
  @Optional()
  @IntIn(JOB_LIMITS.cpuMillis.min, JOB_LIMITS.cpuMillis.max)
  cpuMillis?: number;

  @ApiPropertyOptional({ example: 65536, description: "Memory MiB per replica of this role (default the template's memoryMiB)." })
  @Optional()
  @IntIn(JOB_LIMITS.memoryMiB.min, JOB_LIMITS.memoryMiB.max)
  memoryMiB?: number;
}

export class CreateJobDto {
  @ApiProperty({ example: 'llama-ft-7' })
  @Required()
  @IsName()
  name!: string;

  @ApiProperty({ example: 'vision' })
  @Required()
  @IsName()
  team!: string;

  @ApiPropertyOptional({ enum: JOB_KINDS, default: 'training' })
  @Optional()
  @OneOf(JOB_KINDS)
  kind?: (typeof JOB_KINDS)[number];

  @ApiPropertyOptional({
    example: 100,
    description: 'Admins only: a numeric priority (larger is more important). Members choose a priorityClass instead (a number from a member is a 400).',
  })
  @Optional()
  @IntIn(JOB_LIMITS.priority.min, JOB_LIMITS.priority.max)
  priority?: number;

  @ApiPropertyOptional({
    example: 'high',
    description:
      "A priority class (GET /v1/priority-classes): the job's priority is its value. Members may choose classes up to their team's maxPriorityClass " +
      '(403 naming the allowed ones above it; 422 for an unknown class). Absent: the default class, or priority 0 when there is none.',
  })
  @Optional()
  @IsName()
  priorityClass?: string;

  @ApiPropertyOptional({ default: true })
  @Optional()
  @IsBool()
  preemptible?: boolean;

  @ApiPropertyOptional({ example: 4, description: 'Replicas of a job of one role (required unless `roles` is given; not with `roles`).' })
  @ValidateIf((o: CreateJobDto) => o.roles == null || o.replicas !== undefined)
  @Required()
  @IntIn(JOB_LIMITS.replicas.min, JOB_LIMITS.replicas.max)
  replicas!: number;

  @ApiPropertyOptional({ example: 2, description: 'Elastic gang: least replica count accepted (default replicas).' })
  @Optional()
  @IntIn(JOB_LIMITS.replicas.min, JOB_LIMITS.replicas.max)
  @AtMost('replicas')
  minReplicas?: number;

  @ApiPropertyOptional({ example: 8, description: 'Accelerators per replica of a job of one role (required unless `roles` is given; not with `roles`).' })
  @ValidateIf((o: CreateJobDto) => o.roles == null || o.acceleratorsPerReplica !== undefined)
  @Required()
  @IntIn(JOB_LIMITS.acceleratorsPerReplica.min, JOB_LIMITS.acceleratorsPerReplica.max)
  acceleratorsPerReplica!: number;

  @ApiPropertyOptional({
    type: () => [JobRoleDto],
    description:
      'Addition: a multi-role gang — each role with its own count, minimum and shape (a CPU-only driver and 8-GPU workers). ' +
      'Quota is charged per role; the gang starts only when every role reaches its minimum. Instead of replicas, minReplicas and ' +
      "acceleratorsPerReplica; every role runs the job's template (its pods get QM_ROLE and QM_ROLE_INDEX).",
  })
  @Optional()
  @IsArray({ message: 'must be an array of roles' })
  @ArrayMaxSize(JOB_LIMITS.roles.max, { message: `must have at most ${JOB_LIMITS.roles.max} roles` })
  @ValidateNested({ each: true })
  @Type(() => JobRoleDto)
  roles?: JobRoleDto[];

  @ApiProperty({ type: [String], example: ['h100-80gb', 'a100-80gb'], description: 'Acceptable flavors, most preferred first.' })
  @Required()
  @IsNameList(JOB_LIMITS.flavors.min, JOB_LIMITS.flavors.max)
  flavors!: string[];

  @ApiPropertyOptional({ enum: FLAVOR_SELECTIONS, default: 'preference', description: "Addition: 'fastest' picks by speed." })
  @Optional()
  @OneOf(FLAVOR_SELECTIONS)
  flavorSelection?: (typeof FLAVOR_SELECTIONS)[number];

  @MapProperty('number', { required: false, example: { 'h100-80gb': 2.1, 'a100-80gb': 1 }, description: 'Addition: effective speed per listed flavor.' })
  @Optional()
  @IsSpeedMap('flavors')
  speeds?: Record<string, number>;

  @ApiPropertyOptional({ type: () => JobTopologyDto })
  @Optional()
  @IsObject({ message: 'must be an object' })
  @ValidateNested()
  @Type(() => JobTopologyDto)
  topology?: JobTopologyDto;

  @ApiPropertyOptional({
    type: Number,
    example: 7200,
    nullable: true,
    description:
      'Expected runtime, for reservations, backfill and start estimates. Absent or null: the scheduler default (an hour) — except for kind `serving`, which then counts as never ending (no estimate expects its accelerators back).',
  })
  @ValidateIf((_o, v) => v !== null && v !== undefined)
  @IntIn(JOB_LIMITS.expectedRuntimeSeconds.min, JOB_LIMITS.expectedRuntimeSeconds.max)
  expectedRuntimeSeconds?: number | null;

  @ApiPropertyOptional({ type: () => JobCheckpointDto, description: 'Addition: the job checkpoints; preemption then loses only the work since its last checkpoint.' })
  @Optional()
  @IsObject({ message: 'must be an object' })
  @ValidateNested()
  @Type(() => JobCheckpointDto)
  checkpoint?: JobCheckpointDto;

  @ApiProperty({
    type: () => JobTemplateDto,
    description: 'The pod template: at most QM_MAX_TEMPLATE_BYTES (64 KiB by default) as stored JSON, defaults filled in (400 naming `template` beyond).',
  })
  @Required()
  @IsObject({ message: 'must be an object' })
  @ValidateNested()
  @Type(() => JobTemplateDto)
  template!: JobTemplateDto;
}

export const JOB_STATE_FILTERS = ['PENDING', 'ADMITTED', 'BINDING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'PREEMPTED'] as const;

export class ListJobsQuery {
  @ApiPropertyOptional({ example: 'vision', description: 'Only this team (members and executors: one of theirs).' })
  @Optional()
  @IsName()
  team?: string;

  @ApiPropertyOptional({ enum: JOB_STATE_FILTERS })
  @Optional()
  @OneOf(JOB_STATE_FILTERS)
  state?: (typeof JOB_STATE_FILTERS)[number];

  @ApiPropertyOptional({ example: 'llama-ft-7', description: 'Only jobs of this name (exact), newest first — how `qm` finds a job by name, however many jobs came after it.' })
  @Optional()
  @IsName()
  name?: string;

  @ApiPropertyOptional({ enum: JOB_KINDS })
  @Optional()
  @OneOf(JOB_KINDS)
  kind?: (typeof JOB_KINDS)[number];

  @ApiPropertyOptional({ default: 50, minimum: 1, maximum: 500 })
  @Optional()
  @Type(() => Number)
  @IntIn(1, 500)
  limit?: number;

  @ApiPropertyOptional({ description: 'Opaque cursor from the previous page (nextCursor).' })
  @Optional()
  @IsText(1, 512)
  cursor?: string;
}

export const REPORTABLE_STATES = ['RUNNING', 'SUCCEEDED', 'FAILED'] as const;

export class JobStatusDto {
  @ApiProperty({ enum: REPORTABLE_STATES })
  @Required()
  @OneOf(REPORTABLE_STATES)
  state!: (typeof REPORTABLE_STATES)[number];

  @ApiPropertyOptional({ example: 'exit code 0' })
  @Optional()
  @IsText(0, 1024)
  reason?: string;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

export const CANCELLABLE_STATES = ['PENDING', 'ADMITTED', 'BINDING', 'RUNNING'] as const;

/** Which jobs a bulk cancel (POST /v1/jobs/cancellations) takes: a team's, narrowed by state, name and submitter. */
export class CancelJobsDto {
  @ApiProperty({ example: 'vision', description: "The team whose jobs are cancelled (admins: any; members: one of theirs, 403 otherwise)." })
  @Required()
  @IsName()
  team!: string;

  @ApiPropertyOptional({ type: [String], enum: CANCELLABLE_STATES, example: ['PENDING'], description: 'Only jobs in these states (default all four unfinished ones).' })
  @Optional()
  @IsArray({ message: 'must be an array of states' })
  @ArrayMinSize(1, { message: 'must name at least one state' })
  @ArrayMaxSize(CANCELLABLE_STATES.length, { message: `must have at most ${CANCELLABLE_STATES.length} items` })
  @ArrayUnique({ message: 'must not repeat a state' })
  @IsIn(CANCELLABLE_STATES, { each: true, message: `items must be one of ${CANCELLABLE_STATES.join(', ')}` })
  states?: (typeof CANCELLABLE_STATES)[number][];

  @ApiPropertyOptional({ example: 'sweep-lr', description: 'Only jobs of this name (exact).' })
  @Optional()
  @IsName()
  name?: string;

  @ApiPropertyOptional({ example: 'alice', description: "Only jobs submitted by this subject (a token's subject, as jobs show in createdBy)." })
  @Optional()
  @IsText(1, 255)
  createdBy?: string;

  @ApiPropertyOptional({ default: 1000, minimum: 1, maximum: 1000, description: 'At most this many in one call, oldest first (`more` says whether others matched: call again).' })
  @Optional()
  @IntIn(1, 1000)
  limit?: number;

  @ApiPropertyOptional({ default: false, description: 'Only answer which jobs would be cancelled now (`from`: their state); nothing changes.' })
  @Optional()
  @IsBool()
  dryRun?: boolean;
}

/** Which jobs a bulk hold or release (POST /v1/jobs/holds, /v1/jobs/releases) takes: a team's pending ones, narrowed by name and submitter. */
export class HoldJobsDto {
  @ApiProperty({ example: 'vision', description: "The team whose jobs are held or released (admins: any; members: one of theirs, 403 otherwise)." })
  @Required()
  @IsName()
  team!: string;

  @ApiPropertyOptional({ example: 'sweep-lr', description: 'Only jobs of this name (exact).' })
  @Optional()
  @IsName()
  name?: string;

  @ApiPropertyOptional({ example: 'alice', description: "Only jobs submitted by this subject (a token's subject, as jobs show in createdBy)." })
  @Optional()
  @IsText(1, 255)
  createdBy?: string;

  @ApiPropertyOptional({ default: 1000, minimum: 1, maximum: 1000, description: 'At most this many in one call, oldest first (`more` says whether others matched: call again).' })
  @Optional()
  @IntIn(1, 1000)
  limit?: number;

  @ApiPropertyOptional({ default: false, description: 'Only answer which jobs would be held or released now; nothing changes.' })
  @Optional()
  @IsBool()
  dryRun?: boolean;
}

/** A PENDING job's new priority (POST /v1/jobs/{id}/priority): a class, or (admins only) a number. */
export class JobPriorityDto {
  @ApiPropertyOptional({
    example: 'high',
    description:
      "A priority class (GET /v1/priority-classes). Members may choose classes up to their team's maxPriorityClass (403 naming the allowed ones above it; 422 for an unknown class).",
  })
  @Optional()
  @IsName()
  priorityClass?: string;

  @ApiPropertyOptional({ example: 100, description: 'Admins only: a numeric priority (a number from a member is a 400). Give one of the two.' })
  @Optional()
  @IntIn(JOB_LIMITS.priority.min, JOB_LIMITS.priority.max)
  priority?: number;
}

/** An executor's progress report (POST /v1/jobs/{id}/progress): at least one of the two. */
export class JobProgressDto {
  @ApiPropertyOptional({ example: '2026-12-02T08:00:00Z', description: 'When the job last wrote a checkpoint (RFC 3339).' })
  @Optional()
  @IsText(1, 64)
  @Matches(RFC3339, { message: 'must be an RFC 3339 time such as 2026-12-02T08:00:00Z' })
  lastCheckpointAt?: string;

  @ApiPropertyOptional({ example: 0.4, description: 'Fraction of its work done at that checkpoint (0 to 1).' })
  @Optional()
  @NumberIn(0, 1)
  completedFraction?: number;
}
