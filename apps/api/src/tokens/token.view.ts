import { ApiProperty, OmitType } from '@nestjs/swagger';
import { TimeProperty } from '../response.doc.js';
import { ROLES } from './token.dto.js';

type RoleName = (typeof ROLES)[number];

/** A stored token without its secret. */
export class TokenView {
  @ApiProperty({ format: 'uuid' })
  id!: string;
  @ApiProperty({ example: 'alice' })
  subject!: string;
  @ApiProperty({ enum: ROLES })
  role!: RoleName;
  @ApiProperty({ type: [String], example: ['vision'] })
  teams!: string[];
  @TimeProperty()
  createdAt!: string;
  @TimeProperty({ nullable: true })
  revokedAt!: string | null;
  @TimeProperty({ nullable: true, description: 'From then on it is refused (401 TOKEN_EXPIRED); null: it never expires.' })
  expiresAt!: string | null;
  @TimeProperty({ nullable: true, description: 'Last time it authenticated a request (recorded at most once a minute); null: never used.' })
  lastUsedAt!: string | null;
}

/** The answer to creating a token: the secret, shown this once, beside the stored token (never revoked or used yet). */
export class CreatedTokenView extends OmitType(TokenView, ['revokedAt', 'lastUsedAt'] as const) {
  @ApiProperty({ example: 'qm_3q2…', description: 'The secret (stored only as its sha256 hash): keep it now.' })
  token!: string;
}

export class TokenListView {
  @ApiProperty({ type: [TokenView] })
  items!: TokenView[];
}

/** Who the caller is. */
export class WhoamiView {
  @ApiProperty({ example: 'alice' })
  subject!: string;
  @ApiProperty({ enum: ROLES })
  role!: RoleName;
  @ApiProperty({ type: [String] })
  teams!: readonly string[];
  @ApiProperty({ type: String, nullable: true, format: 'uuid', description: 'null for QM_ADMIN_TOKEN' })
  tokenId!: string | null;
}
