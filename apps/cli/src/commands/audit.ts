import type { Command } from 'commander';
import type { CommandContext } from '../context.js';
import { clip, machine, outputFormat } from '../output/render.js';
import { localTime, parseTime } from '../output/time.js';
import { formatTable } from '../table.js';
import { example, noHeadersOption, positiveInt } from './common.js';

interface AuditEntry {
  id: string;
  at: string;
  kind: string;
  team: string | null;
  actor: string;
  message: string;
  data: unknown;
}

/** `qm audit`: who changed which quota or budget, when, from what to what (GET /v1/audit), newest first. */
export function registerAudit(program: Command, ctx: CommandContext): void {
  noHeadersOption(
    program
      .command('audit')
      .description('the audit trail of quota and budget changes and of deleted teams, cohorts and nodes, newest first: when, team, what, who, and the change (members: their teams)')
      .option('--team <team>', 'only this team')
      .option('--limit <n>', 'how many entries (1-500)', '50')
      .option('-o, --output <format>', 'table | wide | json | yaml'),
  )
    .addHelpText('after', example('qm audit', 'qm audit --team vision --limit 10', 'qm audit -o json', 'qm audit --no-headers'))
    .action(async (opts: { team?: string; limit: string; output?: string; headers: boolean }) => {
      const format = outputFormat(opts.output, ['table', 'wide', 'json', 'yaml']);
      const limit = positiveInt('--limit', opts.limit);
      const { items } = await ctx.connect().client.get<{ items: AuditEntry[] }>('/v1/audit', { team: opts.team, limit });
      const m = machine(format, items);
      if (m !== undefined) return ctx.out(m);
      if (items.length === 0) return ctx.warn(`no quota, budget or deletion entries recorded${opts.team !== undefined ? ` for team ${opts.team}` : ''}`);
      const now = ctx.now();
      ctx.out(
        formatTable(
          ['WHEN', 'TEAM', 'KIND', 'BY', 'CHANGE'],
          items.map((e) => [
            localTime(parseTime(e.at) ?? now, now, { timeZone: ctx.timeZone }),
            e.team ?? '-',
            e.kind,
            e.actor,
            format === 'wide' ? e.message : clip(e.message, 100),
          ]),
          { align: 'left', rule: false, headers: opts.headers },
        ),
      );
    });
}
