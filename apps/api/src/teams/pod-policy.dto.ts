import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayUnique, IsArray, IsString, Matches, MaxLength } from 'class-validator';
import { LABEL_KEY } from '../flavors/flavor.dto.js';
import { Optional } from '../validation/validators.js';

/** Most names in one list of a team's pod policy. */
export const POD_POLICY_MAX_ENTRIES = 256;

const SUBDOMAIN = /^(\*|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)$/;
/** A host name, an IPv4 address or a bracket-less IPv6 address. */
const HOST = /^(\*|[A-Za-z0-9]([-A-Za-z0-9.:]*[A-Za-z0-9])?)$/;
const TAINT_KEY = new RegExp(`^\\*$|${LABEL_KEY.source}`);

const List = (pattern: RegExp, what: string, description: string, example: string[]): PropertyDecorator =>
  applyDecorators(
    ApiPropertyOptional({ type: [String], example, description: `${description} \`*\`: any. Empty: none.` }),
    Optional(),
    IsArray({ message: 'must be an array of names' }),
    ArrayMaxSize(POD_POLICY_MAX_ENTRIES, { message: `must have at most ${POD_POLICY_MAX_ENTRIES} items` }),
    ArrayUnique({ message: 'must not repeat a name' }),
    IsString({ each: true, message: 'must contain only strings' }),
    MaxLength(253, { each: true, message: `each must be ${what} or '*' (at most 253 characters)` }),
    Matches(pattern, { each: true, message: `each must be ${what} or '*'` }),
  );

const SUBDOMAIN_NAME = 'a DNS-1123 subdomain';

/**
 * What the team's pod templates may reference (POST /v1/jobs `template`): each list replaces the team's when
 * sent, the others keep theirs. A template naming anything not listed is refused 400 naming the field.
 */
export class PodPolicyDto {
  @List(SUBDOMAIN, SUBDOMAIN_NAME, 'ServiceAccounts its pods may run as (template.serviceAccountName).', ['trainer'])
  serviceAccounts?: string[];

  @List(SUBDOMAIN, SUBDOMAIN_NAME, 'Secrets its pods may mount or pull images with (template.volumes[].secret, template.imagePullSecrets).', ['wandb-key', 'registry-creds'])
  secrets?: string[];

  @List(SUBDOMAIN, SUBDOMAIN_NAME, 'ConfigMaps its pods may mount (template.volumes[].configMap).', ['train-config'])
  configMaps?: string[];

  @List(SUBDOMAIN, SUBDOMAIN_NAME, 'PersistentVolumeClaims its pods may mount (template.volumes[].persistentVolumeClaim).', ['datasets'])
  persistentVolumeClaims?: string[];

  @List(HOST, 'a host name or IP address', 'NFS servers its pods may mount (template.volumes[].nfs.server; host names compare without case).', ['fs-1.example.com'])
  nfsServers?: string[];

  @List(TAINT_KEY, 'a taint key', "Taint keys its pods may tolerate (template.tolerations[].key; a toleration of every taint needs '*'). The flavor's own taint is always tolerated.", [
    'example.com/reserved',
  ])
  tolerations?: string[];
}

/** A team's pod policy as it applies. */
export class PodPolicyView {
  @ApiProperty({ type: [String], example: ['trainer'] })
  serviceAccounts!: string[];
  @ApiProperty({ type: [String], example: ['wandb-key'] })
  secrets!: string[];
  @ApiProperty({ type: [String], example: [] })
  configMaps!: string[];
  @ApiProperty({ type: [String], example: ['datasets'] })
  persistentVolumeClaims!: string[];
  @ApiProperty({ type: [String], example: [] })
  nfsServers!: string[];
  @ApiProperty({ type: [String], example: [] })
  tolerations!: string[];
}
