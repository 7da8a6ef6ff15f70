import type { Command } from 'commander';
import type { FleetHistory, FleetHistoryPoint } from '#api-client';
import type { CommandContext } from '../context.js';
import { UsageError } from '../errors.js';
import { machine, outputFormat } from '../output/render.js';
import { durationWords, localTime, parseTime } from '../output/time.js';
import { formatTable } from '../table.js';
import { example, noHeadersOption } from './common.js';

const RESOLUTIONS = ['minute', 'hour', 'day'] as const;

/** `qm history`: the fleet over time, as the scheduler recorded it (GET /v1/fleet/history). */
export function registerHistory(program: Command, ctx: CommandContext): void {
  noHeadersOption(program
    .command('history')
    .description('the fleet over time, per flavor and team: accelerators offered, held (and the share), asked by waiting jobs, and how long they waited')
    .option('--resolution <grain>', 'minute | hour | day', 'hour')
    .option('--from <time>', 'start, inclusive: 2026-12-01 (UTC midnight) or an RFC 3339 time (default: 2 h of minutes, 7 days of hours, 90 days of days)')
    .option('--to <time>', 'end, exclusive (default: now)')
    .option('--flavor <flavor>', 'only this flavor')
    .option('--team <team>', 'only this team (and the flavor rows); members see only their own teams anyway')
    .option('-o, --output <format>', 'table | json | yaml'))
    .addHelpText('after', example('qm history', 'qm history --resolution minute --flavor h100-80gb', 'qm history --resolution day --from 2026-11-01 -o json', 'qm history --no-headers'))
    .action(async (opts: { resolution: string; from?: string; to?: string; flavor?: string; team?: string; output?: string; headers: boolean }) => {
      const format = outputFormat(opts.output, ['table', 'json', 'yaml']);
      if (!(RESOLUTIONS as readonly string[]).includes(opts.resolution)) throw new UsageError(`--resolution ${opts.resolution}: expected one of ${RESOLUTIONS.join(', ')}`);
      const { client } = ctx.connect();
      const history = await client.get<FleetHistory>('/v1/fleet/history', { resolution: opts.resolution, from: opts.from, to: opts.to, flavor: opts.flavor, team: opts.team });
      const m = machine(format, history);
      if (m !== undefined) return ctx.out(m);
      ctx.out(historyTable(history, ctx.now(), ctx.timeZone, opts.headers));
    });
}

const figure = (n: number): string => (Number.isInteger(n) ? String(n) : n.toFixed(1));
const share = (p: FleetHistoryPoint): string => (p.capacity > 0 ? `${Math.round((p.allocated / p.capacity) * 100)}%` : '-');
const wait = (seconds: number | null): string => (seconds === null ? '-' : seconds < 60 ? `${Math.round(seconds)} s` : durationWords(seconds * 1000));

/** The history as a table under a title line, with a legend; `headers` false (`--no-headers`): the rows alone. */
export function historyTable(h: FleetHistory, now: number, timeZone: string | undefined, headers = true): string {
  const title = `fleet by ${h.resolution} from ${localTime(parseTime(h.from) ?? now, now, { timeZone })} to ${localTime(parseTime(h.to) ?? now, now, { timeZone })}`;
  if (h.items.length === 0) return headers ? `${title}: nothing recorded (the scheduler records a sample every minute while it leads)\n` : '';
  const rows = h.items.map((p) => [
    localTime(parseTime(p.at) ?? now, now, { timeZone }),
    p.flavor,
    p.team ?? '(all)',
    figure(p.capacity),
    figure(p.allocated),
    share(p),
    figure(p.pendingJobs),
    figure(p.pendingAccelerators),
    wait(p.waitP90Seconds),
    wait(p.waitMaxSeconds),
  ]);
  const table = formatTable(['AT', 'FLAVOR', 'TEAM', 'OFFERED', 'HELD', 'HELD%', 'WAITING', 'ASKED', 'WAIT-P90', 'WAIT-MAX'], rows, { align: 'left', rule: false, headers });
  if (!headers) return table;
  return `${title}\n` + table +
    'OFFERED: schedulable accelerators (a team: its nominal quota); ASKED: accelerators of the waiting jobs; hours and days average their minutes.\n';
}
