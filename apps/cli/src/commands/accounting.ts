import type { Command } from 'commander';
import type { Budget, List, UsageItem, UsageReport } from '#api-client';
import type { CommandContext } from '../context.js';
import { UsageError } from '../errors.js';
import { machine, outputFormat } from '../output/render.js';
import { localTime, parseTime } from '../output/time.js';
import { formatTable } from '../table.js';
import { example, noHeadersOption, seg } from './common.js';

const listing = { align: 'left', rule: false } as const;
const PERIODS = ['day', 'week', 'month'] as const;
const UNITS = ['accelerator-hours', 'currency'] as const;
const ACTIONS = ['warn', 'block', 'stop'] as const;

const num = (n: number, digits = 2): string => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const percent = (r: number | null): string => (r === null ? '-' : `${(r * 100).toFixed(1)}%`);

/** `--month 2026-11` → [2026-11-01, 2026-12-01). */
function monthWindow(text: string): { from: string; to: string } {
  const m = /^(\d{4})-(\d{2})$/.exec(text);
  if (m === null || Number(m[2]) < 1 || Number(m[2]) > 12) throw new UsageError(`--month '${text}': expected YYYY-MM, e.g. 2026-11`);
  const next = new Date(Date.UTC(Number(m[1]), Number(m[2]), 1));
  return { from: `${m[1]}-${m[2]}-01`, to: next.toISOString().slice(0, 10) };
}

function oneOf<T extends string>(flag: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) throw new UsageError(`${flag} '${value}': expected one of ${allowed.join(', ')}`);
  return value as T;
}

export function registerAccounting(program: Command, ctx: CommandContext): void {
  noHeadersOption(program
    .command('usage')
    .description('accelerator-hours, wasted hours, cost, jobs completed and share of nominal quota, per team, flavor and day or month (UTC)')
    .option('--from <date>', 'start, inclusive: 2026-11-01 (UTC midnight) or an RFC 3339 time (default: start of this month)')
    .option('--to <date>', 'end, exclusive (default: now)')
    .option('--month <yyyy-mm>', 'one calendar month (UTC), instead of --from/--to')
    .option('--by <dimensions>', 'team, user (who submitted), flavor, and day or month, comma-separated', 'team,flavor')
    .option('--team <team>', 'only this team (default: QM_TEAM or the config\'s team, else every team you may see)')
    .option('--all-teams', 'every team you may see, ignoring the default team')
    .option('-o, --output <format>', 'table | csv | json | yaml'))
    .addHelpText('after', example('qm usage --month 2026-11', 'qm usage --by team,user   # who used the hours, as sacct -u', 'qm usage --from 2026-11-01 --to 2026-12-01 --by team,flavor,day -o csv > november.csv', 'qm usage --by team -o json', 'qm usage --by team -o csv --no-headers'))
    .action(async (opts: { from?: string; to?: string; month?: string; by: string; team?: string; allTeams?: boolean; output?: string; headers: boolean }) => {
      const format = outputFormat(opts.output, ['table', 'csv', 'json', 'yaml']);
      if (opts.month !== undefined && (opts.from !== undefined || opts.to !== undefined)) throw new UsageError('use either --month or --from/--to');
      if (opts.allTeams === true && opts.team !== undefined) throw new UsageError('use either --team or --all-teams');
      const window = opts.month !== undefined ? monthWindow(opts.month) : { from: opts.from, to: opts.to };
      const { client, defaultTeam } = ctx.connect();
      const team = opts.allTeams === true ? undefined : (opts.team ?? defaultTeam);
      const query = { ...window, groupBy: opts.by, team };
      if (format === 'csv') {
        const csv = (await client.request<string>('GET', '/v1/usage', { query, accept: 'text/csv' })).body;
        // --no-headers: the CSV without its header row.
        ctx.out(opts.headers ? csv : csv.replace(/^[^\n]*\n?/, ''));
        return;
      }
      const report = await client.get<UsageReport>('/v1/usage', query);
      const m = machine(format, report);
      if (m !== undefined) return ctx.out(m);
      ctx.out(usageTable(report, ctx.now(), ctx.timeZone, opts.headers));
    });

  const budget = program
    .command('budget')
    .description('team budgets per day, week or month, in accelerator-hours or cost: warn, block new jobs, or stop running jobs too when used up');
  budget.addHelpText(
    'after',
    example('qm budget ls', 'qm budget set vision --period month --limit 5000 --unit accelerator-hours --on-exhausted block', 'qm budget set nlp --period day --limit 200 --on-exhausted stop'),
  );

  budget
    .command('set')
    .description(
      "set a team's budget for a period (admin; audited). When it is used up — warn: an event and a metric (also at 80%); " +
        'block: new jobs wait for the next period, running jobs go on (the team can go over its limit); ' +
        'stop: new jobs wait and running jobs are stopped within a scheduling cycle — requeued after their checkpoint grace period, they resume in the next period',
    )
    .argument('<team>')
    .option('--period <period>', 'day | week | month (UTC)', 'month')
    .option('--limit <n>', 'accelerator-hours, or currency (the unit of the flavors\' cost per hour), per period')
    .option('--unit <unit>', 'accelerator-hours | currency (default: the current budget\'s, else accelerator-hours)')
    .option('--on-exhausted <action>', 'warn | block | stop (default: the current budget\'s, else warn)')
    .option('-o, --output <format>', 'text | json | yaml')
    .addHelpText(
      'after',
      example(
        'qm budget set vision --period month --limit 5000 --unit accelerator-hours --on-exhausted block',
        'qm budget set nlp --limit 20000 --unit currency',
        'qm budget set audio --period day --limit 200 --on-exhausted stop',
      ),
    )
    .action(async (team: string, opts: { period: string; limit?: string; unit?: string; onExhausted?: string; output?: string }) => {
      const format = outputFormat(opts.output, ['text', 'json', 'yaml'], 'text');
      const period = oneOf('--period', opts.period, PERIODS);
      const unit = opts.unit === undefined ? undefined : oneOf('--unit', opts.unit, UNITS);
      const action = opts.onExhausted === undefined ? undefined : oneOf('--on-exhausted', opts.onExhausted, ACTIONS);
      let limit: number | undefined;
      if (opts.limit !== undefined) {
        limit = Number(opts.limit);
        if (opts.limit.trim() === '' || !Number.isFinite(limit) || limit < 0) throw new UsageError(`--limit '${opts.limit}': expected a non-negative number`);
      }
      const client = ctx.connect().client;
      const current = (await client.get<List<Budget>>(`/v1/teams/${seg(team)}/budgets`)).items.find((b) => b.period === period);
      if (current === undefined && limit === undefined) throw new UsageError(`team ${team} has no ${period} budget yet: --limit is required`);
      if (limit === undefined && unit === undefined && action === undefined) throw new UsageError('give --limit, --unit or --on-exhausted');
      const body = { limit: limit ?? current!.limit, unit: unit ?? current?.unit ?? 'accelerator-hours', onExhausted: action ?? current?.onExhausted ?? 'warn' };
      const saved = (await client.request<Budget & { eventId: string }>('PUT', `/v1/teams/${seg(team)}/budgets/${period}`, { body })).body;
      const m = machine(format, saved);
      if (m !== undefined) return ctx.out(m);
      const was = current === undefined ? 'none' : describeBudget(current);
      ctx.out(`budget ${team}/${period}: ${describeBudget(saved)} (was ${was}; audit event ${saved.eventId}); ${usedText(saved)}\n`);
      ctx.out(`when used up: ${saved.whenExhausted.summary}\n`);
    });

  const listBudgets = async (opts: { team?: string; output?: string; headers: boolean }): Promise<void> => {
    const format = outputFormat(opts.output, ['table', 'json', 'yaml']);
    const client = ctx.connect().client;
    const items = (await client.get<List<Budget>>(opts.team === undefined ? '/v1/budgets' : `/v1/teams/${seg(opts.team)}/budgets`)).items;
    const m = machine(format, items);
    if (m !== undefined) return ctx.out(m);
    if (items.length === 0) return ctx.warn(`no budgets${opts.team !== undefined ? ` for team ${opts.team}` : ''}`);
    const now = ctx.now();
    ctx.out(
      formatTable(
        ['TEAM', 'PERIOD', 'LIMIT', 'UNIT', 'ON-EXHAUSTED', 'RUNNING-JOBS', 'CURRENT', 'USED', 'SHARE', 'OVER', 'STATE', 'RESETS'],
        items.map((b) => [
          b.team,
          b.period,
          num(b.limit),
          b.unit,
          b.onExhausted,
          b.whenExhausted.runningJobs,
          b.current.period,
          num(b.current.used),
          percent(b.current.ratio),
          b.current.overshoot > 0 ? num(b.current.overshoot) : '-',
          b.current.state,
          localTime(parseTime(b.current.periodEnd) ?? now, now, { timeZone: ctx.timeZone }),
        ]),
        { ...listing, headers: opts.headers },
      ) + (opts.headers ? RUNNING_JOBS_LEGEND : ''),
    );
  };
  const LIST_DESCRIPTION =
    'budgets and their use in the current period: RUNNING-JOBS is what happens to the team\'s running jobs once a budget is used up, OVER how far its use is over the limit so far';

  noHeadersOption(budget
    .command('ls')
    .description(LIST_DESCRIPTION)
    .option('--team <team>', 'only this team')
    .option('-o, --output <format>', 'table | json | yaml'))
    .addHelpText('after', example('qm budget ls', 'qm budget ls --team vision -o json', 'qm budget ls --no-headers'))
    .action(listBudgets);

  noHeadersOption(program
    .command('budgets')
    .description(`${LIST_DESCRIPTION} (the same as qm budget ls)`)
    .option('--team <team>', 'only this team')
    .option('-o, --output <format>', 'table | json | yaml'))
    .addHelpText('after', example('qm budgets', 'qm budgets --team vision', 'qm budgets --no-headers'))
    .action(listBudgets);

  budget
    .command('rm')
    .description('delete a team\'s budget for a period (admin; audited)')
    .argument('<team>')
    .option('--period <period>', 'day | week | month', 'month')
    .addHelpText('after', example('qm budget rm vision --period month'))
    .action(async (team: string, opts: { period: string }) => {
      const period = oneOf('--period', opts.period, PERIODS);
      const r = (await ctx.connect().client.request<{ eventId: string }>('DELETE', `/v1/teams/${seg(team)}/budgets/${period}`)).body;
      ctx.out(`budget ${team}/${period} deleted (audit event ${r.eventId})\n`);
    });
}

const describeBudget = (b: Pick<Budget, 'limit' | 'unit' | 'onExhausted' | 'period'>): string =>
  `${num(b.limit)} ${b.unit === 'currency' ? '(cost)' : 'accelerator-hours'} per ${b.period}, ${b.onExhausted} when exhausted`;

const usedText = (b: Budget): string =>
  `used ${num(b.current.used)} (${percent(b.current.ratio)}) of ${b.current.period}, ${b.current.state}` +
  (b.current.overshoot > 0 ? `, ${num(b.current.overshoot)} over the limit` : '');

/** Under the budget table: what RUNNING-JOBS means. */
const RUNNING_JOBS_LEGEND =
  '\nRUNNING-JOBS once a budget is used up: continue — they go on (warn; block holds only new jobs back), so OVER can grow;\n' +
  'stop — they are requeued within one scheduling cycle, after their checkpoint grace period, until the next period.\n';

/** The usage report under a title line; `headers` false (`--no-headers`): the rows alone (the TOTAL row included). */
export function usageTable(r: UsageReport, now: number, timeZone: string | undefined, headers = true): string {
  const dims: ('team' | 'user' | 'userToken' | 'flavor' | 'period')[] = [];
  if (r.groupBy.includes('team')) dims.push('team');
  // A user is a token: two tokens that share a subject are two lines, told apart by the token's id (its first 8 characters).
  if (r.groupBy.includes('user')) dims.push('user', 'userToken');
  if (r.groupBy.includes('flavor')) dims.push('flavor');
  if (r.groupBy.includes('day') || r.groupBy.includes('month')) dims.push('period');
  const figures = (i: UsageItem): string[] => [num(i.acceleratorHours), num(i.wastedAcceleratorHours), num(i.cost), String(i.jobsCompleted), percent(i.nominalShare)];
  const head = [...dims.map((d) => (d === 'userToken' ? 'TOKEN' : d.toUpperCase())), 'ACCEL-HOURS', 'WASTED', 'COST', 'JOBS-DONE', 'OF-NOMINAL'];
  const cell = (i: UsageItem, d: (typeof dims)[number]): string => (d === 'userToken' ? (i.userToken?.slice(0, 8) ?? '-') : (i[d] ?? '-'));
  const rows = r.items.map((i) => [...dims.map((d) => cell(i, d)), ...figures(i)]);
  if (dims.length > 0) rows.push([...dims.map((_, k) => (k === 0 ? 'TOTAL' : '')), ...figures(r.total)]);
  else rows.push(figures(r.total));
  const from = parseTime(r.from) ?? now;
  const to = parseTime(r.to) ?? now;
  const table = formatTable(head, rows, { ...listing, headers });
  if (!headers) return table;
  return `usage from ${localTime(from, now, { timeZone })} to ${localTime(to, now, { timeZone })}${r.teams ? ` (teams ${r.teams.join(', ')})` : ''}\n` + table;
}
