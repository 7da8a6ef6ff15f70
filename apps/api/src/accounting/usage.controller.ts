import { Controller, Get, Headers, Inject, Param, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
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

  @Get('usage')
  @ApiOperation({
    summary: 'Report accelerator usage and cost per team, flavor and day or month',
    description:
      'Accelerator-hours, wasted accelerator-hours, cost, jobs completed and share of nominal quota, from the usage ledger, per `groupBy` ' +
      '(team, flavor, and at most one of day or month; default team,flavor) over [from, to) (default: the start of the current UTC month to now), ' +
      'with a `total`. Admins see every team, members their own teams only (403 when `team` names another). `Accept: text/csv` answers the items ' +
      'as CSV, without the total; 400 names each bad parameter (with groupBy day, the window spans at most 400 days).',
  })
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

  @Get('flavors/:name/prices')
  @ApiOperation({
    summary: "List a flavor's price history",
    description:
      'Every costPerHour the flavor has had and since when, oldest first; kept after the flavor is deleted, so past usage can still be priced. ' +
      'Admins and members. 404 when no such flavor exists or ever had a price.',
  })
  @Answers(PriceListView)
  async prices(@Param('name', NamePipe) name: string): Promise<PriceListView> {
    return { items: await this.accounting.prices(name) };
  }
}
