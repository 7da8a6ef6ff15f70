import { Inject, Injectable } from '@nestjs/common';
import { teamUsage, type TeamFlavorUsage } from '#core';
import { UsageRepository } from '#db';

/** Live usage per team and flavor: always computed by libs/core's teamUsage from current allocations and pending demand. */
@Injectable()
export class UsageService {
  constructor(@Inject(UsageRepository) private readonly usage: UsageRepository) {}

  async byTeam(): Promise<Map<string, TeamFlavorUsage[]>> {
    const rows = teamUsage(await this.usage.load());
    const out = new Map<string, TeamFlavorUsage[]>();
    for (const r of rows) {
      const list = out.get(r.team) ?? [];
      list.push(r);
      out.set(r.team, list);
    }
    return out;
  }
}
