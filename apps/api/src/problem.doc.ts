import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiResponse } from '@nestjs/swagger';

class FieldErrorDoc {
  @ApiProperty({ example: 'template.cpuMillis' })
  field!: string;
  @ApiProperty({ example: 'must be ≥ 1' })
  message!: string;
}

/** application/problem+json, as every error of the API is sent (RFC 9457 + `code`). */
export class ProblemDoc {
  @ApiProperty({ example: 'urn:quartermaster:problem:validation-failed' })
  type!: string;
  @ApiProperty({ example: 'The request has invalid fields' })
  title!: string;
  @ApiProperty({ example: 400 })
  status!: number;
  @ApiProperty({ example: 'invalid field: template.cpuMillis' })
  detail!: string;
  @ApiProperty({ example: 'VALIDATION_FAILED' })
  code!: string;
  @ApiProperty({ type: [FieldErrorDoc] })
  errors!: FieldErrorDoc[];
  @ApiProperty({ required: false, example: 'maxPendingJobs', description: 'With 429 LIMIT_EXCEEDED: the per-team limit that refused the request (maxPendingJobs or submissionsPerSecond).' })
  limit?: string;
}

const problem = (status: number, description: string): MethodDecorator & ClassDecorator =>
  ApiResponse({ status, description, type: ProblemDoc, content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/ProblemDoc' } } } });

/** 429: a per-team limit refused the request (`limit` names it); the answer carries Retry-After. */
export const ApiLimitProblems = (): MethodDecorator & ClassDecorator =>
  problem(429, "A per-team limit (maxPendingJobs, submissionsPerSecond) refused it; `limit` names it, Retry-After says when to retry; nothing was created");

/** The error answers every authenticated endpoint may give. */
export const ApiProblems = (): MethodDecorator & ClassDecorator =>
  applyDecorators(
    problem(400, 'Invalid fields: every offending field is listed in `errors`'),
    problem(401, 'Missing, invalid or expired token (TOKEN_EXPIRED)'),
    problem(403, 'Valid token, not allowed'),
    problem(404, 'No such object'),
    problem(409, 'Conflict: Idempotency-Key reused with another body, flavor in use, forbidden state change'),
    problem(422, 'Unknown referenced team, flavor or cohort'),
  );
