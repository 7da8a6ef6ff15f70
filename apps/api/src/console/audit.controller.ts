import { Controller, Get, Inject, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { AuditRepository } from '#db';
import { Caller } from '../auth/auth.decorators.js';
import type { Principal } from '../auth/principal.js';
import { ApiProblems } from '../problem.doc.js';
import { Answers } from '../response.doc.js';
import { AuditView } from './console.view.js';
import { AuditQuery } from './console.dto.js';
import { visibleTeams } from './scope.js';

@ApiTags('console')
@ApiBearerAuth()
@ApiProblems()
@Controller('v1/audit')
export class AuditController {
  constructor(@Inject(AuditRepository) private readonly audit: AuditRepository) {}

  /** Quota and budget changes (who, when, before → after), newest first; members see their teams' entries. */
  @Get()
  @Answers(AuditView)
  async list(@Query() q: AuditQuery, @Caller() caller: Principal): Promise<AuditView> {
    const limit = q.limit ?? 50;
    const rows = await this.audit.list({
      teams: visibleTeams(caller, q.team),
      team: q.team,
      limit: limit + 1,
      before: q.before,
    });
    const page = rows.slice(0, limit);
    return {
      items: page.map((e) => ({
        id: e.id,
        at: e.at.toISOString(),
        kind: e.kind,
        team: e.team,
        actor: e.actor,
        message: e.message,
        data: e.data,
      })),
      nextBefore: rows.length > limit ? (page.at(-1)?.id ?? null) : null,
    };
  }
}
