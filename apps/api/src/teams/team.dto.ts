import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsObject, ValidateIf, ValidateNested } from 'class-validator';
import { TEAM_LIMIT_MAX } from '#common';
import { IntIn, IsName, IsNameList, OneOf, Optional, Required } from '../validation/validators.js';
import { PodPolicyDto } from './pod-policy.dto.js';

export const WITHIN_TEAM = ['Never', 'LowerPriority', 'LowerOrNewerEqualPriority'] as const;
export const RECLAIM = ['Never', 'LowerPriority', 'Any'] as const;

export class PreemptionDto {
  @ApiPropertyOptional({ enum: WITHIN_TEAM, default: 'LowerPriority', nullable: true, description: 'null: the default.' })
  @Optional()
  @OneOf(WITHIN_TEAM)
  withinTeam?: (typeof WITHIN_TEAM)[number] | null;

  @ApiPropertyOptional({ enum: RECLAIM, default: 'Any', nullable: true, description: 'null: the default.' })
  @Optional()
  @OneOf(RECLAIM)
  reclaimWithinCohort?: (typeof RECLAIM)[number] | null;
}

/** Per-team limits on job submissions (admin-set); each null or absent: the API's configured default. */
export class TeamLimitsDto {
  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    example: 50000,
    description: 'Most jobs the team may have PENDING at once; a submission beyond it is refused 429 (`limit: "maxPendingJobs"`). null: the default (QM_TEAM_MAX_PENDING_JOBS, 50,000).',
  })
  @Optional()
  @IntIn(1, TEAM_LIMIT_MAX.maxPendingJobs)
  maxPendingJobs?: number | null;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    example: 200,
    description:
      'Most job submissions per second, across every API replica (a burst of 5 seconds\' worth is allowed at once); beyond it 429 (`limit: "submissionsPerSecond"`) with Retry-After. null: the default (QM_TEAM_SUBMISSIONS_PER_SECOND, 200).',
  })
  @Optional()
  @IntIn(1, TEAM_LIMIT_MAX.submissionsPerSecond)
  submissionsPerSecond?: number | null;
}

export class PutTeamDto {
  @ApiPropertyOptional({ type: String, example: 'research', nullable: true, description: 'Borrowing pool; null or absent = none.' })
  @ValidateIf((_o, v) => v !== null && v !== undefined)
  @IsName()
  cohort?: string | null;

  @ApiPropertyOptional({ type: Number, example: 1, default: 1, nullable: true, description: 'Share of the cohort\'s idle capacity relative to its other teams; null: the default.' })
  @Optional()
  @IntIn(1, 1000)
  fairShareWeight?: number | null;

  @ApiPropertyOptional({ type: () => PreemptionDto })
  @Optional()
  @IsObject({ message: 'must be an object' })
  @ValidateNested()
  @Type(() => PreemptionDto)
  preemption?: PreemptionDto;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: 'high',
    description: "The highest priority class the team's members may choose (GET /v1/priority-classes); null or absent = up to the default class.",
  })
  @ValidateIf((_o, v) => v !== null && v !== undefined)
  @IsName()
  maxPriorityClass?: string | null;

  @ApiPropertyOptional({
    type: () => TeamLimitsDto,
    nullable: true,
    description: 'Limits on its job submissions. A limit left out keeps its value (the default for a new team); null, or `limits: null`, restores the default.',
  })
  @Optional()
  @IsObject({ message: 'must be an object' })
  @ValidateNested()
  @Type(() => TeamLimitsDto)
  limits?: TeamLimitsDto | null;

  @ApiPropertyOptional({
    type: () => PodPolicyDto,
    nullable: true,
    description:
      "What its jobs' pod templates may reference: ServiceAccounts, Secrets, ConfigMaps, PVCs, NFS servers and tolerated taints. Each list sent replaces the team's, a list left out keeps its value (empty for a new team: nothing allowed); `podPolicy: null` empties every list.",
  })
  @Optional()
  @IsObject({ message: 'must be an object' })
  @ValidateNested()
  @Type(() => PodPolicyDto)
  podPolicy?: PodPolicyDto | null;

  @ApiPropertyOptional({
    type: [String],
    nullable: true,
    example: ['cv-train', 'cv-eval'],
    description:
      "Kubernetes namespaces whose annotated pods and workloads may name the team (quartermaster.io/team); one elsewhere is refused with the reason on its pods. Left out: kept (a new team's: its own name); null or []: its own name.",
  })
  @ValidateIf((_o, v) => v !== null && v !== undefined)
  @IsNameList(0, 64)
  namespaces?: string[] | null;
}

/** PATCH: the same fields, each optional; the ones sent replace the team's (null: the default, as in a JSON merge patch), the others stay. */
export class PatchTeamDto extends PutTeamDto {}

export const QUOTA_MAX = 1_000_000;
/** Bounds of the CPU (millicores) and memory (MiB) caps: what a 32-bit column holds. */
export const CPU_LIMIT_MAX = 2_000_000_000;
export const MEMORY_LIMIT_MAX = 2_000_000_000;

export class PutQuotaDto {
  @ApiProperty({ example: 32, description: 'Guaranteed accelerators.' })
  @Required()
  @IntIn(0, QUOTA_MAX)
  nominal!: number;

  @ApiPropertyOptional({ type: Number, example: 16, nullable: true, description: 'Most it may borrow above nominal; null/absent = no limit.' })
  @ValidateIf((_o, v) => v !== null && v !== undefined)
  @IntIn(0, QUOTA_MAX)
  borrowingLimit?: number | null;

  @ApiPropertyOptional({ type: Number, example: 8, nullable: true, description: 'Most of its idle nominal others may use; null/absent = no limit.' })
  @ValidateIf((_o, v) => v !== null && v !== undefined)
  @IntIn(0, QUOTA_MAX)
  lendingLimit?: number | null;

  @ApiPropertyOptional({
    type: Number,
    example: 256000,
    nullable: true,
    description:
      "Most CPU (millicores) the team's replicas may hold on this flavor's nodes at once, those without accelerators too (a cap of its own: never borrowed or lent); null/absent = no limit.",
  })
  @ValidateIf((_o, v) => v !== null && v !== undefined)
  @IntIn(0, CPU_LIMIT_MAX)
  cpuMillisLimit?: number | null;

  @ApiPropertyOptional({ type: Number, example: 2097152, nullable: true, description: 'Most memory (MiB) likewise; null/absent = no limit.' })
  @ValidateIf((_o, v) => v !== null && v !== undefined)
  @IntIn(0, MEMORY_LIMIT_MAX)
  memoryMiBLimit?: number | null;
}
