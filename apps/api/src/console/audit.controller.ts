import { Controller, Get, Inject, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
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

  /** Quota and budget changes (who, when, before → after), newest first; members see their teams' entries. */
  @Get()
  @Answers(AuditView)
  list(@Query() q: AuditQuery, @Caller() caller: Principal): Promise<AuditView> {
    return this.console.auditPage(q, caller);
  }
}
