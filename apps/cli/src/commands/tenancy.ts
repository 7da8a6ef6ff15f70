import type { Command } from 'commander';
import type { ClusterNode, Flavor, List, QuotaSet, QuotaUsage, QuotaView, Team } from '#api-client';
import type { CommandContext } from '../context.js';
import { UsageError } from '../errors.js';
import { limitText, machine, outputFormat } from '../output/render.js';
import { formatTable } from '../table.js';
import { example, limitValue, listingFrame, noHeadersOption, printFrame, seg } from './common.js';

const listing = { align: 'left', rule: false } as const;
type ListFlags = { output?: string; headers: boolean };

export function registerTenancy(program: Command, ctx: CommandContext): void {
  noHeadersOption(
    program
      .command('flavors')
      .description('accelerator flavors: kind, extended resource, memory, relative speed, price per accelerator-hour')
      .option('-o, --output <format>', 'table | name | json | yaml (name: flavor/NAME, one a line)'),
  )
    .addHelpText('after', example('qm flavors', 'qm flavors -o json', 'qm flavors -o name', 'qm flavors --no-headers'))
    .action(async (opts: ListFlags) => {
      const format = outputFormat(opts.output, ['table', 'name', 'json', 'yaml']);
      const { items } = await ctx.connect().client.get<List<Flavor>>('/v1/flavors');
      printFrame(
        ctx,
        listingFrame(format, items, 'flavor', () =>
          formatTable(
            ['NAME', 'KIND', 'RESOURCE', 'MEMORY', 'SPEED', 'COST/H'],
            items.map((f) => [f.name, f.kind, f.resourceName, f.memoryGiB === null ? '-' : `${f.memoryGiB} GiB`, String(f.relativeSpeed), f.costPerHour.toFixed(2)]),
            { ...listing, headers: opts.headers },
          ),
        ),
      );
    });

  noHeadersOption(
    program
      .command('nodes')
      .description('nodes: flavor, accelerators, CPU, memory, topology, whether they take new work')
      .option('--flavor <flavor>', 'only nodes of this flavor')
      .option('-o, --output <format>', 'table | name | json | yaml (name: node/NAME, one a line)'),
  )
    .addHelpText('after', example('qm nodes', 'qm nodes --flavor h100-80gb -o json', 'qm nodes --flavor h100-80gb -o name', 'qm nodes --no-headers'))
    .action(async (opts: ListFlags & { flavor?: string }) => {
      const format = outputFormat(opts.output, ['table', 'name', 'json', 'yaml']);
      const items = (await ctx.connect().client.get<List<ClusterNode>>('/v1/nodes')).items.filter((n) => opts.flavor === undefined || n.flavor === opts.flavor);
      printFrame(ctx, listingFrame(format, items, 'node', () =>
        formatTable(
          ['NAME', 'FLAVOR', 'ACCELERATORS', 'CPU', 'MEMORY', 'ZONE', 'BLOCK', 'DOMAIN', 'SCHEDULABLE', 'SOURCE'],
          items.map((n) => [
            n.name,
            n.flavor,
            String(n.accelerators),
            `${n.cpuMillis / 1000}`,
            `${Math.round(n.memoryMiB / 1024)} GiB`,
            n.topology.zone ?? '-',
            n.topology.block ?? '-',
            n.topology.domain ?? '-',
            n.schedulable ? 'yes' : 'no',
            n.source,
          ]),
          { ...listing, headers: opts.headers },
        ),
      ));
    });

  noHeadersOption(
    program
      .command('teams')
      .description('teams: cohort, fair-share weight, preemption policy, and per flavor used/nominal (borrowed)')
      .option('-o, --output <format>', 'table | name | json | yaml (name: team/NAME, one a line)'),
  )
    .addHelpText('after', example('qm teams', 'qm teams -o yaml', 'qm teams -o name', 'qm teams --no-headers'))
    .action(async (opts: ListFlags) => {
      const format = outputFormat(opts.output, ['table', 'name', 'json', 'yaml']);
      const { items } = await ctx.connect().client.get<List<Team>>('/v1/teams');
      printFrame(ctx, listingFrame(format, items, 'team', () =>
        formatTable(
          ['NAME', 'COHORT', 'WEIGHT', 'WITHIN-TEAM', 'RECLAIM', 'USED/NOMINAL'],
          items.map((t) => [
            t.name,
            t.cohort ?? '-',
            String(t.fairShareWeight),
            t.preemption.withinTeam,
            t.preemption.reclaimWithinCohort,
            t.quotas.map((q) => `${q.flavor} ${q.used}/${q.nominal}${q.borrowed > 0 ? ` (+${q.borrowed} borrowed)` : ''}`).join(', ') || '-',
          ]),
          { ...listing, headers: opts.headers },
        ),
      ));
    });

  interface QuotaSetFlags {
    nominal?: string;
    borrowingLimit?: string;
    lendingLimit?: string;
    cpuMillisLimit?: string;
    memoryMibLimit?: string;
    output?: string;
  }
  const describeQuota = (q: Omit<QuotaView, 'team' | 'flavor'>): string =>
    `nominal ${q.nominal}, borrowing ${limitText(q.borrowingLimit)}, lending ${limitText(q.lendingLimit)}, CPU millis ${limitText(q.cpuMillisLimit)}, memory MiB ${limitText(q.memoryMiBLimit)}`;

  const quota = program.command('quota').description('per-team quotas: list and set (admins set; every change is an audited event)');
  quota.addHelpText('after', example('qm quota ls', 'qm quota set vision h100-80gb --nominal 32 --borrowing-limit 16'));

  noHeadersOption(
    quota
      .command('ls')
      .description(
        'quotas and live usage per team and flavor: nominal, borrowing and lending limits, used, borrowed, lent, pending demand, and CPU and memory held/limit',
      )
      .option('--team <team>', 'only this team')
      .option('-o, --output <format>', 'table | json | yaml'),
  )
    .addHelpText('after', example('qm quota ls', 'qm quota ls --team vision -o json', 'qm quota ls --no-headers'))
    .action(async (opts: ListFlags & { team?: string }) => {
      const format = outputFormat(opts.output, ['table', 'json', 'yaml']);
      const client = ctx.connect().client;
      const teams = opts.team === undefined ? (await client.get<List<Team>>('/v1/teams')).items : [await client.get<Team>(`/v1/teams/${seg(opts.team)}`)];
      const rows = teams.flatMap((t) => t.quotas.map((q) => ({ team: t.name, ...q })));
      const m = machine(format, rows);
      if (m !== undefined) return ctx.out(m);
      if (rows.length === 0) return ctx.warn(`no quotas${opts.team !== undefined ? ` for team ${opts.team}` : ''}`);
      ctx.out(
        formatTable(
          ['TEAM', 'FLAVOR', 'NOMINAL', 'BORROWING-LIMIT', 'LENDING-LIMIT', 'USED', 'BORROWED', 'LENT', 'PENDING', 'CPU-M', 'MEMORY-MIB'],
          rows.map((q) => [
            q.team,
            q.flavor,
            String(q.nominal),
            limitText(q.borrowingLimit),
            limitText(q.lendingLimit),
            String(q.used),
            String(q.borrowed),
            String(q.lent),
            String(q.pendingDemand),
            `${q.cpuMillisUsed}/${limitText(q.cpuMillisLimit)}`,
            `${q.memoryMiBUsed}/${limitText(q.memoryMiBLimit)}`,
          ]),
          { ...listing, headers: opts.headers },
        ),
      );
    });

  quota
    .command('set')
    .description('set a team\'s quota for a flavor (admin); limits not given keep their current value (none = no limit)')
    .argument('<team>')
    .argument('<flavor>')
    .option('--nominal <n>', 'guaranteed accelerators (required for a new quota)')
    .option('--borrowing-limit <n>', 'most it may borrow above nominal from the cohort; none = no limit')
    .option('--lending-limit <n>', 'most of its idle nominal others may use; none = no limit')
    .option('--cpu-millis-limit <n>', "most CPU (millicores) the team's replicas may hold on the flavor's nodes, accelerator-less ones too; none = no limit")
    .option('--memory-mib-limit <n>', "most memory (MiB) the team's replicas may hold on the flavor's nodes; none = no limit")
    .option('-o, --output <format>', 'text | json | yaml')
    .addHelpText(
      'after',
      example(
        'qm quota set vision h100-80gb --nominal 32',
        'qm quota set nlp h100-80gb --nominal 16 --borrowing-limit none --lending-limit 8',
        'qm quota set etl h100-80gb --nominal 0 --cpu-millis-limit 64000 --memory-mib-limit 262144',
      ),
    )
    .action(async (team: string, flavor: string, opts: QuotaSetFlags) => {
      const format = outputFormat(opts.output, ['text', 'json', 'yaml'], 'text');
      const nominal = opts.nominal === undefined ? undefined : limitValue('--nominal', opts.nominal);
      if (nominal === null) throw new UsageError('--nominal must be a number (a quota cannot be unlimited)');
      const borrowingLimit = opts.borrowingLimit === undefined ? undefined : limitValue('--borrowing-limit', opts.borrowingLimit);
      const lendingLimit = opts.lendingLimit === undefined ? undefined : limitValue('--lending-limit', opts.lendingLimit);
      const cpuMillisLimit = opts.cpuMillisLimit === undefined ? undefined : limitValue('--cpu-millis-limit', opts.cpuMillisLimit);
      const memoryMiBLimit = opts.memoryMibLimit === undefined ? undefined : limitValue('--memory-mib-limit', opts.memoryMibLimit);
      if ([nominal, borrowingLimit, lendingLimit, cpuMillisLimit, memoryMiBLimit].every((v) => v === undefined)) {
        throw new UsageError('give --nominal, --borrowing-limit, --lending-limit, --cpu-millis-limit or --memory-mib-limit');
      }
      const client = ctx.connect().client;
      const current: QuotaUsage | undefined = (await client.get<Team>(`/v1/teams/${seg(team)}`)).quotas.find((q) => q.flavor === flavor);
      if (current === undefined && nominal === undefined) throw new UsageError(`team ${team} has no quota for ${flavor} yet: --nominal is required`);
      const body = {
        nominal: nominal ?? current!.nominal,
        borrowingLimit: borrowingLimit !== undefined ? borrowingLimit : (current?.borrowingLimit ?? null),
        lendingLimit: lendingLimit !== undefined ? lendingLimit : (current?.lendingLimit ?? null),
        cpuMillisLimit: cpuMillisLimit !== undefined ? cpuMillisLimit : (current?.cpuMillisLimit ?? null),
        memoryMiBLimit: memoryMiBLimit !== undefined ? memoryMiBLimit : (current?.memoryMiBLimit ?? null),
      };
      const saved = (await client.request<QuotaSet>('PUT', `/v1/teams/${seg(team)}/quotas/${seg(flavor)}`, { body })).body;
      const m = machine(format, saved);
      if (m !== undefined) return ctx.out(m);
      const was = current === undefined ? 'none' : describeQuota(current);
      ctx.out(`quota ${team}/${flavor}: ${describeQuota(saved)} (was ${was}; audit event ${saved.eventId})\n`);
    });

  quota
    .command('rm')
    .description('delete a team\'s quota for a flavor (admin; audited)')
    .argument('<team>')
    .argument('<flavor>')
    .addHelpText('after', example('qm quota rm vision a100-80gb'))
    .action(async (team: string, flavor: string) => {
      const r = (await ctx.connect().client.request<{ eventId: string }>('DELETE', `/v1/teams/${seg(team)}/quotas/${seg(flavor)}`)).body;
      ctx.out(`quota ${team}/${flavor} deleted (audit event ${r.eventId})\n`);
    });
}
