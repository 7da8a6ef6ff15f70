import { Controller, Get, Headers, Inject, Param, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Caller } from '../auth/auth.decorators.js';
import type { Principal } from '../auth/principal.js';
import { ApiProblems } from '../problem.doc.js';
import { Answers } from '../response.doc.js';
import { NamePipe } from '../validation/name.pipe.js';
import { UsageQuery } from './accounting.dto.js';
import { AccountingService, usageCsv } from './accounting.service.js';
import { PriceListView, UsageReportView } from './accounting.view.js';

@ApiTags('accounting')
@ApiBearerAuth()
@ApiProblems()
@Controller('v1')
export class UsageController {
  constructor(@Inject(AccountingService) private readonly accounting: AccountingService) {}

  /**
   * Accelerator-hours, wasted accelerator-hours, cost, jobs completed and share of nominal quota, from the
   * usage ledger, per team/flavor/day or month in [from, to). `Accept: text/csv` answers CSV.
   */
  @Get('usage')
  @ApiProduces('application/json', 'text/csv')
  @Answers(UsageReportView)
  async usage(
    @Query() query: UsageQuery,
    @Caller() caller: Principal,
    @Headers('accept') accept: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<UsageReportView | string> {
    const report = await this.accounting.usage(query, caller, new Date());
    if (accept !== undefined && /\btext\/csv\b/i.test(accept)) {
      void reply.type('text/csv; charset=utf-8');
      return usageCsv(report);
    }
    return report;
  }

  /** The flavor's price history (costPerHour and since when), oldest first; kept after the flavor is deleted. */
  @Get('flavors/:name/prices')
  @Answers(PriceListView)
  async prices(@Param('name', NamePipe) name: string): Promise<PriceListView> {
    return { items: await this.accounting.prices(name) };
  }
}
