import { type Command, Option } from 'commander';
import { ApiError, type ApiClient } from '../client/api-client.js';
import { FINAL_STATES, JOB_STATES, type Flavor, type Job, type JobDetail, type JobEvent, type JobState, type List, type Queue, type Team } from '#api-client';
import type { CommandContext } from '../context.js';
import { CliFailure, UsageError, worstExitCode } from '../errors.js';
import { asNames, clip, machine, type OutputFormat, outputFormat } from '../output/render.js';
import { age, durationWords, localDateTime, localTime, parseTime, startCell, startsIn } from '../output/time.js';
import { formatTable } from '../table.js';
import { example, listingFrame, noHeadersOption, positiveInt, printFrame, seg } from './common.js';
import { checkName, flagName, INLINE_FLAGS, type InlineJobFlags, inlineJob } from './inline-job.js';
import { readJobFile } from './job-file.js';
import { type Frame, watch, type WatchFlags, watchInterval, watchOptions } from './watch.js';
import { resolveJob } from './job-ref.js';
import { accelerators, etaCell, flavorText, positionCell, progressText, replicasText, sourceText, stateLine, templateFacts, whyText } from './job-text.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** `30s`, `10m`, `2h`, `1d` → ms. */
export function parseDuration(flag: string, text: string): number {
  const m = /^(\d+(?:\.\d+)?)(s|m|min|h|d)$/.exec(text.trim());
  if (m === null) throw new UsageError(`${flag} '${text}': expected a duration such as 90s, 10m, 2h`);
  const unit = { s: 1, m: 60, min: 60, h: 3600, d: 86_400 }[m[2] as 's' | 'm' | 'min' | 'h' | 'd'];
  return Number(m[1]) * unit * 1000;
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

function states(text: string | undefined): JobState[] | undefined {
  if (text === undefined) return undefined;
  const out: JobState[] = [];
  for (const raw of text.split(',')) {
    const s = raw.trim().toUpperCase();
    if (!(JOB_STATES as readonly string[]).includes(s)) throw new UsageError(`--state '${raw.trim()}': expected one of ${JOB_STATES.map((x) => x.toLowerCase()).join(', ')} (comma-separated)`);
    if (!out.includes(s as JobState)) out.push(s as JobState);
  }
  return out;
}

type SubmitFlags = InlineJobFlags & { file?: string; team?: string; idempotencyKey?: string; wait?: boolean; waitTimeout?: string; output?: string; pollInterval: string };
type ListFlags = WatchFlags & { team?: string; allTeams?: boolean; state?: string; kind?: string; limit: string; output?: string; headers: boolean };
type QueueFlags = WatchFlags & { team?: string; flavor?: string; limit: string; output?: string; headers: boolean };

/** Human formats get a time stamp per print in a watch (unless --no-headers); machine formats print bare. */
const watchStyle = (format: OutputFormat, headers = true): { stamp: boolean; yaml: boolean } => ({
  stamp: headers && (format === 'table' || format === 'wide' || format === 'text'),
  yaml: format === 'yaml',
});

/** Runs `frame` once and prints it, or (with --watch) every `interval` ms until Ctrl-C. */
async function showOrWatch(ctx: CommandContext, interval: number | undefined, style: { stamp: boolean; yaml: boolean }, frame: (signal?: AbortSignal) => Promise<Frame>): Promise<void> {
  if (interval === undefined) return printFrame(ctx, await frame());
  await watch(ctx, interval, frame, style);
}

export function registerJobs(program: Command, ctx: CommandContext): void {
  const submit = program
    .command('submit')
    .description("submit a job: from a YAML or JSON file in the API's job shape (-f), or from flags (--name, --gpus, --image); prints its id")
    .argument('[command...]', 'without -f: the container command and its arguments, after -- (or use --command)')
    .option('-f, --file <path>', "job file (YAML or JSON); '-' reads stdin")
    .option('--name <name>', 'without -f: the job name (a DNS-1123 label)')
    .option('--gpus <n>', 'without -f: accelerators per replica (GPUs, or the Trainium/Gaudi/TPU chips of the flavor); the job holds replicas × gpus')
    .option('--image <image>', 'without -f: the container image')
    .option('--replicas <n>', 'without -f: replicas of the gang (default 1)')
    .option('--flavor <flavors>', "without -f: flavors it accepts, most preferred first, comma-separated or repeated (default: the team's quota flavors, fastest first)", collect)
    .option('--command <cmd>', "without -f: the container command as one string, split like a shell does ('python train.py --lr 3e-4')")
    .option('--kind <kind>', 'training | eval | batch-inference | serving (without -f; default training)')
    .option('--priority-class <class>', 'without -f: a priority class (qm priority-classes)')
    .option('--runtime <duration>', 'without -f: expected runtime, for start estimates and backfill (e.g. 2h, 90m)')
    .option('--team <team>', 'submit for this team (overrides the file; default: the file, QM_TEAM or the config)')
    .option('--idempotency-key <key>', 'retrying with the same key and file returns the same job instead of a second one')
    .option('--wait', 'follow the job until it runs, ends or fails, printing each state change (and while pending, its reason and estimated start)')
    .option('--wait-timeout <duration>', 'with --wait: give up after this long (e.g. 30m); the job stays queued')
    .option('-o, --output <format>', 'id | name | json | yaml (default id: the job id alone, for scripts; name: job/NAME)')
    .addOption(new Option('--poll-interval <duration>', 'with --wait: how often to ask').default('1s').hideHelp())
    .addHelpText(
      'after',
      example(
        'qm submit -f job.yaml',
        'qm submit -f job.yaml --wait',
        "cat job.json | qm submit -f - --idempotency-key llama-ft-7-try-1",
        'qm submit --name llama-ft-8 --team vision --gpus 8 --image ghcr.io/acme/llama-ft:1.4 --replicas 4 --flavor h100-80gb -- python train.py --lr 3e-4',
        "qm submit --name eval-3 --gpus 1 --image busybox --command 'sh -c \"echo hi\"' --runtime 10m -o name",
        'qm submit --name sweep-4 --gpus 4 --image ghcr.io/acme/sweep:2 --kind batch-inference --priority-class high',
      ) +
        '\njob.yaml:\n' +
        '  name: llama-ft-7\n  team: vision\n  replicas: 4\n  acceleratorsPerReplica: 8\n  flavors: [h100-80gb, a100-80gb]\n' +
        '  expectedRuntimeSeconds: 7200\n  template: { image: ghcr.io/acme/llama-ft:1.4, command: [python, train.py] }\n' +
        '\nWithout -f, --name, --gpus (per replica) and --image are required; they are checked before anything is sent (exit 2 naming the flag).\n' +
        'With --wait the exit code is 0 once the job runs or succeeds, 1 if it fails or is cancelled.\n',
    );
  submit.action(async (words: string[], opts: SubmitFlags) => {
    const format = outputFormat(opts.output, ['id', 'name', 'json', 'yaml'], 'id');
    const timeout = opts.waitTimeout === undefined ? undefined : parseDuration('--wait-timeout', opts.waitTimeout);
    if (timeout !== undefined && opts.wait !== true) throw new UsageError('--wait-timeout only applies with --wait');
    const poll = parseDuration('--poll-interval', opts.pollInterval);
    const inline = INLINE_FLAGS.filter((k) => opts[k] !== undefined);
    if (words.length > 0 && !ctx.argv.includes('--')) {
      throw new UsageError(`unexpected argument '${words[0]}': give the job file with -f, and a command after -- (qm submit --name N --gpus 8 --image IMG -- python train.py)`);
    }
    let job: Record<string, unknown>;
    if (opts.file !== undefined) {
      if (inline.length > 0 || words.length > 0) {
        throw new UsageError(`use either -f FILE or ${inline.length > 0 ? inline.map(flagName).join(', ') : 'a command after --'}, not both (the job file holds the whole job)`);
      }
      job = await readJobFile(ctx.io, opts.file);
    } else if (inline.length === 0 && words.length === 0) {
      throw new UsageError('give a job file with -f FILE, or the job as flags: --name, --gpus and --image (see qm submit --help)');
    } else {
      job = inlineJob(opts, words);
    }
    const { client, defaultTeam } = ctx.connect();
    if (opts.team !== undefined) job.team = opts.team;
    else if (job.team === undefined && defaultTeam !== undefined) job.team = defaultTeam;
    if (opts.file === undefined) {
      if (job.team === undefined) throw new UsageError('--team is required for a job without a file (or set QM_TEAM, or qm login --team)');
      job.team = checkName('--team', job.team as string);
      job.flavors ??= await teamFlavors(client, job.team as string);
    }
    const headers: Record<string, string> = opts.idempotencyKey === undefined ? {} : { 'idempotency-key': opts.idempotencyKey };
    const reply = await client.request<Job>('POST', '/v1/jobs', { body: job, headers });
    const created = reply.body;
    const m = machine(format, created);
    if (m !== undefined) ctx.out(m);
    else ctx.out(format === 'name' ? asNames('job', [created]) : `${created.id}\n`);
    if (reply.status === 200) ctx.warn(`note: Idempotency-Key ${opts.idempotencyKey ?? ''} was used before with this job: nothing new was submitted`);
    if (opts.wait !== true) return;
    ctx.exit(await follow(ctx, created, poll, timeout));
  });

  watchOptions(
    noHeadersOption(
      program
        .command('ls')
        .alias('jobs')
        .description('list jobs, newest first: ID, NAME, TEAM, STATE, FLAVOR, REPLICAS, AGE, and for pending jobs POSITION and ETA')
        .option('--team <team>', 'only this team (default: QM_TEAM or the config\'s team, else every team you may see)')
        .option('--all-teams', 'every team you may see, ignoring the default team')
        .option('--state <states>', 'only these states, comma-separated (pending,running,…)')
        .option('--kind <kind>', 'training | eval | batch-inference | serving')
        .option('--limit <n>', 'at most this many jobs', '50')
        .option('-o, --output <format>', 'table | wide | name | json | yaml (name: job/NAME, one a line)'),
    ),
    'the table',
  )
    .addHelpText(
      'after',
      example(
        'qm ls',
        'qm ls --state pending,running --team vision',
        'qm jobs --all-teams -o wide',
        "qm ls -o json | jq -r '.[].id'",
        'qm ls --state pending -o name',
        'qm ls --no-headers | wc -l',
        'qm ls --state pending,running -w --interval 5',
      ) + WATCH_NOTE,
    )
    .action(async (opts: ListFlags) => {
      const format = outputFormat(opts.output, ['table', 'wide', 'name', 'json', 'yaml']);
      if (opts.allTeams === true && opts.team !== undefined) throw new UsageError('use either --team or --all-teams');
      const limit = positiveInt('--limit', opts.limit);
      const wanted = states(opts.state);
      const interval = watchInterval(opts);
      const { client, defaultTeam } = ctx.connect();
      const team = opts.allTeams === true ? undefined : (opts.team ?? defaultTeam);
      const empty = `no jobs${team !== undefined ? ` in team ${team}` : ''}${wanted ? ` in state ${wanted.join(', ').toLowerCase()}` : ''}`;
      await showOrWatch(ctx, interval, watchStyle(format, opts.headers), async (signal) => {
        const jobs = await listJobs(client, { team, states: wanted, kind: opts.kind, limit }, signal);
        return listingFrame(format, jobs, 'job', () => jobsTable(jobs, ctx.now(), format === 'wide', { timeZone: ctx.timeZone }, opts.headers), empty);
      });
    });

  watchOptions(
    noHeadersOption(
      program
        .command('queue')
        .description("pending jobs in the scheduler's order: position, job, team, priority, reason code, and the estimated start as local time and in how long")
        .option('--team <team>', 'only this team (default: every team you may see; positions stay those of the whole queue)')
        .option('--flavor <flavor>', 'only jobs that accept this flavor')
        .option('--limit <n>', 'at most this many jobs, from the head of the queue', '100')
        .option('-o, --output <format>', 'table | wide | name | json | yaml (wide adds ID, KIND, ACCELERATORS, FLAVORS, WAITING, MESSAGE)'),
    ),
    'the queue',
  )
    .addHelpText(
      'after',
      example('qm queue', 'qm queue --team vision --flavor h100-80gb', 'qm queue -o wide --limit 20', 'qm queue -o name | head -3', 'qm queue -w') +
        "\nThe order is the scheduler's at its last cycle (GET /v1/queue); jobs it has not looked at yet come last, without a position.\n" +
        'START is an estimate: only the jobs the scheduler reserves capacity for get one.\n' +
        WATCH_NOTE,
    )
    .action(async (opts: QueueFlags) => {
      const format = outputFormat(opts.output, ['table', 'wide', 'name', 'json', 'yaml']);
      const limit = positiveInt('--limit', opts.limit);
      const interval = watchInterval(opts);
      const { client } = ctx.connect();
      await showOrWatch(ctx, interval, watchStyle(format, opts.headers), async (signal) => {
        const { items, total } = await queuePage(client, { team: opts.team, flavor: opts.flavor, limit }, signal);
        const frame = listingFrame(format, items, 'job', () => queueTable(items, ctx.now(), format === 'wide', { timeZone: ctx.timeZone }, opts.headers), `no pending jobs${opts.team !== undefined ? ` in team ${opts.team}` : ''}${opts.flavor !== undefined ? ` for flavor ${opts.flavor}` : ''}`);
        return total > items.length ? { ...frame, key: `${frame.key}/${total}`, hint: `showing the first ${items.length} of ${total} pending jobs (--limit ${total} for all)` } : frame;
      });
    });

  watchOptions(
    program
      .command('describe')
      .description('one job in full: spec, state, placement by node, pending reason and estimate, transitions and events')
      .argument('<job>', 'job id (or a unique name, or job/NAME as -o name prints it)')
      .option('--team <team>', 'look the name up in this team')
      .option('-o, --output <format>', 'text | name | json | yaml (json: the job with its events)'),
    'the description',
  )
    .addHelpText('after', example('qm describe 3f2a…-…', 'qm describe llama-ft-7 -o json', 'qm describe llama-ft-7 -o name', 'qm describe llama-ft-7 -w --interval 5') + WATCH_NOTE)
    .action(async (ref: string, opts: WatchFlags & { team?: string; output?: string }) => {
      const format = outputFormat(opts.output, ['text', 'name', 'json', 'yaml'], 'text');
      const interval = watchInterval(opts);
      const { client, defaultTeam } = ctx.connect();
      const first = await resolveJob(client, ref, opts.team ?? defaultTeam);
      let fetched: JobDetail | undefined = first;
      await showOrWatch(ctx, interval, watchStyle(format), async (signal) => {
        const job = fetched ?? (await client.get<JobDetail>(`/v1/jobs/${seg(first.id)}`, undefined, signal));
        fetched = undefined;
        const events = (await client.get<List<JobEvent>>(`/v1/jobs/${seg(job.id)}/events`, undefined, signal)).items;
        const key = JSON.stringify([job, events]);
        if (format === 'name') return { key, text: asNames('job', [job]) };
        const m = machine(format, { ...job, events });
        return { key, text: m ?? describeText(job, events, ctx.now(), { timeZone: ctx.timeZone }) };
      });
    });

  watchOptions(
    program
      .command('why')
      .description('why a job is pending: reason code and message, queue position, and when it is expected to start (or why there is no estimate)')
      .argument('<job>', 'job id (or a unique name, or job/NAME)')
      .option('--team <team>', 'look the name up in this team')
      .option('-o, --output <format>', 'text | json | yaml (json: the job\'s pending object, state and id)'),
    'the answer',
  )
    .addHelpText('after', example('qm why 3f2a…-…', 'qm why llama-ft-7', 'qm why llama-ft-7 --watch') + WATCH_NOTE)
    .action(async (ref: string, opts: WatchFlags & { team?: string; output?: string }) => {
      const format = outputFormat(opts.output, ['text', 'json', 'yaml'], 'text');
      const interval = watchInterval(opts);
      const { client, defaultTeam } = ctx.connect();
      const first = await resolveJob(client, ref, opts.team ?? defaultTeam);
      let fetched: JobDetail | undefined = first;
      await showOrWatch(ctx, interval, watchStyle(format), async (signal) => {
        const job = fetched ?? (await client.get<JobDetail>(`/v1/jobs/${seg(first.id)}`, undefined, signal));
        fetched = undefined;
        const data = { id: job.id, name: job.name, team: job.team, state: job.state, pending: job.pending };
        const m = machine(format, data);
        // The answer changes with the state, the reason and the transitions (a failure's reason), not with the clock.
        return { key: JSON.stringify([data, job.transitions.length, job.preemptionCount]), text: m ?? whyText(job, ctx.now(), { timeZone: ctx.timeZone }) };
      });
    });

  program
    .command('cancel')
    .description('cancel jobs (their pods are deleted where bound), named or by filter; cancelling a cancelled job is a no-op')
    .argument('[job...]', 'job ids (or unique names, or job/NAME)')
    .option('--team <team>', 'look names up in this team; with a filter, the team whose jobs are cancelled')
    .option('--state <states>', "filter: only jobs in these states, comma-separated (pending,admitted,binding,running; default all four)")
    .option('--name <name>', 'filter: only jobs of this name')
    .option('--user <subject>', 'filter: only jobs this subject submitted (as `qm describe` shows in Created by)')
    .option('--dry-run', 'with a filter: list the jobs it would cancel, and cancel nothing')
    .addHelpText(
      'after',
      example(
        'qm cancel 3f2a…-…',
        'qm cancel --state pending --team vision              # every pending job of the team',
        'qm cancel --name sweep-lr --user alice              # alice\'s sweep-lr jobs of the default team',
        'qm ls --state pending -o name | xargs qm cancel',
      ),
    )
    .action(async (refs: string[], opts: { team?: string; state?: string; name?: string; user?: string; dryRun?: boolean }) => {
      const filtered = opts.state !== undefined || opts.name !== undefined || opts.user !== undefined;
      if (opts.dryRun && !filtered) throw new UsageError('--dry-run goes with a filter (--state, --name, --user)');
      if (filtered && refs.length > 0) throw new UsageError('give jobs to cancel or a filter (--state, --name, --user), not both');
      if (!filtered && refs.length === 0) throw new UsageError('name the jobs to cancel, or a filter: --state, --name, --user (with --team)');
      const { client, defaultTeam } = ctx.connect();
      if (filtered) {
        const team = opts.team ?? defaultTeam;
        if (team === undefined) throw new UsageError('a filter cancels one team\'s jobs: give --team (or set a default team with qm config)');
        const wanted = states(opts.state);
        const unfinished = ['PENDING', 'ADMITTED', 'BINDING', 'RUNNING'];
        const done = wanted?.find((s) => !unfinished.includes(s));
        if (done !== undefined) throw new UsageError(`--state ${done.toLowerCase()}: only unfinished jobs can be cancelled (pending, admitted, binding, running)`);
        let total = 0;
        for (;;) {
          const body = { team, ...(wanted ? { states: wanted } : {}), ...(opts.name ? { name: opts.name } : {}), ...(opts.user ? { createdBy: opts.user } : {}), ...(opts.dryRun ? { dryRun: true } : {}) };
          const r = (await client.request<{ cancelled: number; jobs: { id: string; name: string; from: string }[]; more: boolean }>('POST', '/v1/jobs/cancellations', { body })).body;
          if (opts.dryRun) {
            // Nothing changed: the first page is all there is to show (`more`: others match too).
            for (const j of r.jobs) ctx.out(`${j.id} ${team}/${j.name}: would be cancelled (${j.from})\n`);
            ctx.warn(`qm: dry run: ${r.jobs.length}${r.more ? '+' : ''} job(s) of team ${team} would be cancelled`);
            return;
          }
          for (const j of r.jobs) ctx.out(`${j.id} ${team}/${j.name}: cancelled (was ${j.from})\n`);
          total += r.cancelled;
          // A call that cancelled nothing though more matched (they changed state meanwhile) ends it too.
          if (!r.more || r.cancelled === 0) break;
        }
        ctx.warn(`qm: cancelled ${total} job(s) of team ${team}`);
        return;
      }
      const failures: CliFailure[] = [];
      for (const ref of refs) {
        try {
          const job = await resolveJob(client, ref, opts.team ?? defaultTeam);
          const was = job.state;
          const after = (await client.request<Job>('DELETE', `/v1/jobs/${seg(job.id)}`)).body;
          ctx.out(was === 'CANCELLED' ? `${after.id} ${after.team}/${after.name}: already cancelled\n` : `${after.id} ${after.team}/${after.name}: cancelled (was ${was})\n`);
        } catch (error) {
          if (!(error instanceof CliFailure)) throw error;
          failures.push(error);
          ctx.warn(`qm: ${ref}: ${error.message}`);
        }
      }
      // 2 when every failure was bad input (a name the API refuses), else 1.
      if (failures.length > 0) ctx.exit(worstExitCode(failures));
    });

  program
    .command('priority')
    .description("change a pending job's priority: a class up to your team's ceiling (admins: any class, or --value)")
    .argument('<job>', 'job id (or unique name, or job/NAME)')
    .argument('[class]', 'the priority class to change to (qm priority-classes lists them)')
    .option('--value <n>', 'admins: a numeric priority instead of a class')
    .option('--team <team>', 'look names up in this team')
    .addHelpText('after', example('qm priority llama-ft-7 high', 'qm priority 3f2a…-… batch', 'qm priority llama-ft-7 --value 250   # admins'))
    .action(async (ref: string, priorityClass: string | undefined, opts: { value?: string; team?: string }) => {
      if ((priorityClass === undefined) === (opts.value === undefined)) throw new UsageError('give the priority class to change to, or --value N (admins), not both');
      if (opts.value !== undefined && !/^-?\d+$/.test(opts.value.trim())) throw new UsageError(`--value '${opts.value}': expected a whole number such as 100 or -50`);
      const body = opts.value === undefined ? { priorityClass } : { priority: Number(opts.value.trim()) };
      const { client, defaultTeam } = ctx.connect();
      const job = await resolveJob(client, ref, opts.team ?? defaultTeam);
      const label = (j: Job): string => (j.priorityClass === null ? String(j.priority) : `${j.priorityClass} (${j.priority})`);
      const after = (await client.request<Job>('POST', `/v1/jobs/${seg(job.id)}/priority`, { body })).body;
      ctx.out(label(after) === label(job) ? `${after.id} ${after.team}/${after.name}: priority already ${label(after)}\n` : `${after.id} ${after.team}/${after.name}: priority ${label(job)} → ${label(after)}\n`);
    });
}

const WATCH_NOTE =
  '\n--watch asks again every --interval seconds (default 2, at least 1) and prints again only when something changed, under a\n' +
  '"# 14:32:05 UTC" line (json, yaml, name and --no-headers: the output alone); a server error is reported on stderr and retried;\n' +
  'Ctrl-C or SIGTERM stops it with exit 0.\n';

/** The team's quota flavors, fastest first (then by name): what an inline job accepts when no --flavor is given. */
async function teamFlavors(client: ApiClient, team: string): Promise<string[]> {
  let quotas: string[];
  try {
    quotas = (await client.get<Team>(`/v1/teams/${seg(team)}`)).quotas.map((q) => q.flavor);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) throw new UsageError(`--team '${team}': no such team (qm teams lists them)`);
    throw error;
  }
  if (quotas.length === 0) throw new UsageError(`team ${team} has no quota on any flavor: name the flavors the job accepts with --flavor`);
  const speed = new Map((await client.get<List<Flavor>>('/v1/flavors')).items.map((f) => [f.name, f.relativeSpeed]));
  return [...new Set(quotas)].sort((a, b) => (speed.get(b) ?? 0) - (speed.get(a) ?? 0) || (a < b ? -1 : a > b ? 1 : 0));
}

/** The head of the queue (GET /v1/queue, pending jobs in the scheduler's order), up to `limit` jobs, and how many there are. */
export async function queuePage(client: ApiClient, f: { team?: string; flavor?: string; limit: number }, signal?: AbortSignal): Promise<{ items: Job[]; total: number }> {
  const items: Job[] = [];
  let total: number;
  do {
    const page = await client.get<Queue>('/v1/queue', { state: 'PENDING', team: f.team, flavor: f.flavor, limit: Math.min(500, f.limit - items.length), offset: items.length }, signal);
    items.push(...page.items);
    total = page.total;
    if (page.items.length === 0) break;
  } while (items.length < Math.min(f.limit, total));
  return { items, total };
}

/** `qm queue`: POSITION JOB TEAM PRIORITY REASON START; wide adds ID KIND ACCELERATORS FLAVORS WAITING MESSAGE. */
export function queueTable(jobs: Job[], now: number, wide: boolean, time: { timeZone?: string }, headers = true): string {
  const head = ['POSITION', 'JOB', 'TEAM', 'PRIORITY', 'REASON', 'START'];
  if (wide) head.push('ID', 'KIND', 'ACCELERATORS', 'FLAVORS', 'WAITING', 'MESSAGE');
  const rows = jobs.map((j) => {
    const eta = parseTime(j.pending?.estimatedStartAt);
    const row = [j.pending?.position != null ? String(j.pending.position) : '-', j.name, j.team, String(j.priority), j.pending?.code ?? '-', eta === null ? '-' : startCell(eta, now, time)];
    if (wide) {
      const queued = parseTime(j.queuedAt) ?? parseTime(j.submittedAt) ?? now;
      row.push(j.id, j.kind, String(accelerators(j)), j.flavors.join(','), age(queued, now), clip(j.pending?.message ?? '-', 120));
    }
    return row;
  });
  return formatTable(head, rows, { align: 'left', rule: false, headers });
}

export async function listJobs(
  client: ApiClient,
  f: { team?: string; states?: JobState[]; kind?: string; limit: number },
  signal?: AbortSignal,
): Promise<Job[]> {
  const one = async (state: JobState | undefined): Promise<Job[]> => {
    const out: Job[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.get<List<Job>>('/v1/jobs', { team: f.team, state, kind: f.kind, limit: Math.min(500, f.limit - out.length), cursor }, signal);
      out.push(...page.items);
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined && out.length < f.limit);
    return out;
  };
  if (f.states === undefined) return one(undefined);
  const all = (await Promise.all(f.states.map(one))).flat();
  all.sort((a, b) => (a.submittedAt < b.submittedAt ? 1 : a.submittedAt > b.submittedAt ? -1 : a.id < b.id ? 1 : -1));
  return all.slice(0, f.limit);
}

export function jobsTable(jobs: Job[], now: number, wide: boolean, time: { timeZone?: string }, headers = true): string {

  const head = ['ID', 'NAME', 'TEAM', 'STATE', 'FLAVOR', 'REPLICAS', 'AGE', 'POSITION', 'ETA'];
  if (wide) head.push('KIND', 'PRIORITY', 'ACCELERATORS', 'REASON', 'SUBMITTED', 'BY');
  const rows = jobs.map((j) => {
    const submitted = parseTime(j.submittedAt) ?? now;
    const row = [j.id, j.name, j.team, j.state, clip(flavorText(j), wide ? 80 : 24), replicasText(j), age(submitted, now), positionCell(j), etaCell(j, now)];
    if (wide) row.push(j.kind, String(j.priority), String(accelerators(j)), j.pending?.code ?? '-', localTime(submitted, now, time), j.createdBy);
    return row;
  });
  return formatTable(head, rows, { align: 'left', rule: false, headers });
}

function describeText(j: JobDetail, events: JobEvent[], now: number, time: { timeZone?: string }): string {
  const at = (iso: string | null): string => {
    const t = parseTime(iso);
    return t === null ? '-' : `${localDateTime(t, time)} (${age(t, now)} ago)`;
  };
  const field = (k: string, v: string): string => `${`${k}:`.padEnd(14)}${v}\n`;
  let out = '';
  out += field('Name', j.name);
  out += field('ID', j.id);
  out += field('Team', j.team);
  const source = sourceText(j);
  if (source) out += field('Workload', source);
  if (j.namespace !== undefined) out += field('Namespace', `${j.namespace} (its pods, in Kubernetes mode)`);
  out += field('Kind', `${j.kind}, priority ${j.priority}${j.priorityClass ? ` (class ${j.priorityClass})` : ''}, ${j.preemptible ? 'preemptible' : 'not preemptible'}`);
  out += field('State', j.state + (j.preemptionCount > 0 ? ` (preempted ${j.preemptionCount}×${j.preemptedBy ? `, last by ${j.preemptedBy}` : ''})` : ''));
  if (j.roles === null) {
    out += field('Replicas', `${replicasText(j)} × ${j.acceleratorsPerReplica} accelerator(s), ${j.cpuMillisPerReplica} mCPU, ${j.memoryMiBPerReplica} MiB each`);
  } else {
    const total = j.roles.reduce((sum, r) => sum + r.replicas * r.acceleratorsPerReplica, 0);
    out += field('Replicas', `${replicasText(j)} in ${j.roles.length} roles, ${total} accelerator(s) in all (each role charged its own shape)`);
    out += 'Roles:\n';
    out += indent(
      formatTable(
        ['ROLE', 'REPLICAS', 'MIN', 'ACCELERATORS', 'CPU', 'MEMORY'],
        j.roles.map((r) => [r.name, String(r.replicas), String(r.minReplicas), String(r.acceleratorsPerReplica), `${r.cpuMillisPerReplica} mCPU`, `${r.memoryMiBPerReplica} MiB`]),
        { align: 'left', rule: false },
      ),
    );
  }
  out += field('Flavors', `${j.flavors.join(', ')} (${j.flavorSelection})${j.flavor ? `; admitted on ${j.flavor}` : ''}`);
  out += field('Topology', j.topology.tpuShape ? `${j.topology.level}, TPU shape ${j.topology.tpuShape}` : j.topology.level);
  out += field('Runtime', j.expectedRuntimeSeconds === null ? (j.kind === 'serving' ? 'no end (a serving job without expectedRuntimeSeconds)' : 'unknown (no expectedRuntimeSeconds)') : `expected ${durationWords(j.expectedRuntimeSeconds * 1000)}`);
  out += field('Checkpoint', j.checkpoint === null ? 'none: a preempted run restarts from the start' : `every ${durationWords(j.checkpoint.intervalSeconds * 1000)}, ${j.checkpoint.gracePeriodSeconds} s to checkpoint when evicted`);
  const done = j.progress.completedFraction;
  const progress = progressText(j, now, time);
  if (progress !== undefined) {
    out += field('Progress', progress);
    if (done !== null && j.expectedRuntimeSeconds !== null && done < 1) {
      out += field('Remaining', `about ${durationWords(j.expectedRuntimeSeconds * (1 - done) * 1000)} of its expected ${durationWords(j.expectedRuntimeSeconds * 1000)}, from that checkpoint`);
    }
  }
  const t = templateFacts(j.template);
  if (t.image) out += field('Image', t.image + (t.command.length > 0 ? `  ${t.command.join(' ')}` : ''));
  out += field('Submitted', `${at(j.submittedAt)} by ${j.createdBy}`);
  if (j.admittedAt) out += field('Admitted', at(j.admittedAt));
  if (j.startedAt) out += field('Started', at(j.startedAt));
  if (j.finishedAt) out += field('Finished', at(j.finishedAt));
  if (j.state === 'PENDING' && j.pending) {
    const p = j.pending;
    const eta = parseTime(p.estimatedStartAt);
    out += field('Pending', p.code === null ? p.message : `${p.code}: ${p.message}`);
    if (p.position !== null) out += field('Position', String(p.position));
    out += field('Expected', eta === null ? 'no estimate (qm why says why)' : `to start ${startsIn(eta, now, time)}`);
  }
  const alloc = j.allocation ?? [];
  if (alloc.length > 0) {
    const byNode = new Map<string, { replicas: number[]; accelerators: number; roles: Set<string> }>();
    for (const a of alloc) {
      const n = byNode.get(a.node) ?? { replicas: [], accelerators: 0, roles: new Set<string>() };
      n.replicas.push(a.replica);
      n.accelerators += a.accelerators;
      if (a.role !== null) n.roles.add(a.role);
      byNode.set(a.node, n);
    }
    const withRoles = j.roles !== null;
    out += '\nPlacement:\n';
    out += indent(
      formatTable(
        ['NODE', 'REPLICAS', 'ACCELERATORS', ...(withRoles ? ['ROLES'] : [])],
        [...byNode].map(([node, n]) => [node, n.replicas.sort((a, b) => a - b).join(','), String(n.accelerators), ...(withRoles ? [[...n.roles].sort().join(',')] : [])]),
        { align: 'left', rule: false },
      ),
    );
  }
  const transitions = j.transitions ?? [];
  if (transitions.length > 0) {
    out += '\nTransitions:\n';
    out += indent(formatTable(['TIME', 'FROM', 'TO', 'REASON'], transitions.map((t) => [localTime(parseTime(t.at) ?? now, now, { ...time, seconds: true }), t.from ?? '-', t.to, clip(t.reason, 100)]), { align: 'left', rule: false }));
  }
  if (events.length > 0) {
    out += '\nEvents:\n';
    out += indent(formatTable(['TIME', 'KIND', 'ACTOR', 'MESSAGE'], events.map((e) => [localTime(parseTime(e.at) ?? now, now, { ...time, seconds: true }), e.kind, e.actor, clip(e.message, 120)]), { align: 'left', rule: false }));
  }
  return out;
}

const indent = (text: string): string => text.split('\n').map((l) => (l === '' ? l : `  ${l}`)).join('\n');

/** `qm submit --wait`: one line per change of state or pending reason; 0 once running or succeeded, 1 failed/cancelled. */
async function follow(ctx: CommandContext, first: Job, pollMs: number, timeoutMs: number | undefined): Promise<number> {
  const { client } = ctx.connect();
  const started = ctx.now();
  const time = { timeZone: ctx.timeZone, seconds: true };
  let last = '';
  let job = first;
  for (;;) {
    const key = JSON.stringify([job.state, job.pending?.code, job.pending?.message, job.pending?.position, job.pending?.estimatedStartAt, job.admittedReplicas]);
    const now = ctx.now();
    if (key !== last) {
      ctx.out(`${localTime(now, now, time)}  ${stateLine(job, now, { timeZone: ctx.timeZone })}\n`);
      last = key;
    }
    if (job.state === 'RUNNING' || job.state === 'SUCCEEDED') return 0;
    if (FINAL_STATES.has(job.state)) return 1;
    if (timeoutMs !== undefined && now - started >= timeoutMs) {
      throw new CliFailure(`job ${job.id} is still ${job.state} after ${durationWords(timeoutMs)}; it stays queued (qm why ${job.id})`);
    }
    await sleep(pollMs);
    job = await client.get<Job>(`/v1/jobs/${seg(job.id)}`);
  }
}

