import { Controller, Get, Inject, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Caller } from '../auth/auth.decorators.js';
import type { Principal } from '../auth/principal.js';
import { ApiProblems } from '../problem.doc.js';
import { Answers } from '../response.doc.js';
import { AuditQuery } from './console.dto.js';
import { ConsoleService } from './console.service.js';
import { AuditView } from './console.view.js';

@ApiTags('console')
@ApiBearerAuth()
@ApiProblems()
@Controller('v1/audit')
export class AuditController {
  constructor(@Inject(ConsoleService) private readonly console: ConsoleService) {}

  @Get()
  @ApiOperation({
    summary: 'List quota and budget changes, newest first',
    description:
      "The audit trail of quota and budget changes (who, when, before → after), of the other tenancy changes and of API tokens created and revoked " +
      "(token.created, token.revoked), newest first, `limit` (default 50) per page: pass the answer's " +
      "`nextBefore` as `before` for the next page (null on the last). Admins see every team's entries and those of no team (flavors, cohorts, nodes, priority classes, tokens), members their own teams' (403 when `team` names another).",
  })
  @Answers(AuditView)
  list(@Query() q: AuditQuery, @Caller() caller: Principal): Promise<AuditView> {
    return this.console.auditPage(q, caller);
  }
}
