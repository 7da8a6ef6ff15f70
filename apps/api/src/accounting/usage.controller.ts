import { Controller, Get, Headers, Inject, Param, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { notFound } from '#common';
import { FlavorRepository, UsageLedgerRepository } from '#db';
import { Caller } from '../auth/auth.decorators.js';
import type { Principal } from '../auth/principal.js';
import { ApiProblems } from '../problem.doc.js';
import { NamePipe } from '../validation/name.pipe.js';
import { UsageQuery } from './accounting.dto.js';
import { AccountingService, usageCsv } from './accounting.service.js';

@ApiTags('accounting')
@ApiBearerAuth()
@ApiProblems()
@Controller('v1')
export class UsageController {
  constructor(
    @Inject(AccountingService) private readonly accounting: AccountingService,
    @Inject(UsageLedgerRepository) private readonly ledger: UsageLedgerRepository,
    @Inject(FlavorRepository) private readonly flavors: FlavorRepository,
  ) {}

  /**
   * Accelerator-hours, wasted accelerator-hours, cost, jobs completed and share of nominal quota, from the
   * usage ledger, per team/flavor/day or month in [from, to). `Accept: text/csv` answers CSV.
   */
  @Get('usage')
  @ApiProduces('application/json', 'text/csv')
  async usage(
    @Query() query: UsageQuery,
    @Caller() caller: Principal,
    @Headers('accept') accept: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    const report = await this.accounting.usage(query, caller, new Date());
    if (accept !== undefined && /\btext\/csv\b/i.test(accept)) {
      void reply.type('text/csv; charset=utf-8');
      return usageCsv(report);
    }
    return report;
  }

  /** The flavor's price history (costPerHour and since when), oldest first; kept after the flavor is deleted. */
  @Get('flavors/:name/prices')
  async prices(@Param('name', NamePipe) name: string): Promise<unknown> {
    const prices = await this.ledger.prices(name);
    if (prices.length === 0 && (await this.flavors.get(name)) === null) throw notFound(`flavor ${name}`);
    return { items: prices.map((p) => ({ costPerHour: p.costPerHour, effectiveFrom: p.effectiveFrom.toISOString() })) };
  }
}
