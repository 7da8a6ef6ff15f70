import { type Command, Option } from 'commander';
import type { ApiClient } from '../client/api-client.js';
import { FINAL_STATES, JOB_STATES, type Job, type JobDetail, type JobEvent, type JobState, type List } from '#api-client';
import type { CommandContext } from '../context.js';
import { CliFailure, UsageError } from '../errors.js';
import { clip, machine, outputFormat } from '../output/render.js';
import { age, durationWords, localDateTime, localTime, parseTime, startsIn } from '../output/time.js';
import { formatTable } from '../table.js';
import { example, positiveInt, seg } from './common.js';
import { readJobFile } from './job-file.js';
import { resolveJob } from './job-ref.js';
import { accelerators, etaCell, flavorText, positionCell, replicasText, sourceText, stateLine, templateFacts, whyText } from './job-text.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** `30s`, `10m`, `2h`, `1d` → ms. */
export function parseDuration(flag: string, text: string): number {
  const m = /^(\d+(?:\.\d+)?)(s|m|min|h|d)$/.exec(text.trim());
  if (m === null) throw new UsageError(`${flag} '${text}': expected a duration such as 90s, 10m, 2h`);
  const unit = { s: 1, m: 60, min: 60, h: 3600, d: 86_400 }[m[2] as 's' | 'm' | 'min' | 'h' | 'd'];
  return Number(m[1]) * unit * 1000;
}

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

export function registerJobs(program: Command, ctx: CommandContext): void {
  const submit = program
    .command('submit')
    .description('submit a job from a YAML or JSON file in the API\'s job shape; prints its id')
    .requiredOption('-f, --file <path>', "job file (YAML or JSON); '-' reads stdin")
    .option('--team <team>', 'submit for this team (overrides the file; default: the file, QM_TEAM or the config)')
    .option('--idempotency-key <key>', 'retrying with the same key and file returns the same job instead of a second one')
    .option('--wait', 'follow the job until it runs, ends or fails, printing each state change (and while pending, its reason and estimated start)')
    .option('--wait-timeout <duration>', 'with --wait: give up after this long (e.g. 30m); the job stays queued')
    .option('-o, --output <format>', 'id | json | yaml (default id: the job id alone, for scripts)')
    .addOption(new Option('--poll-interval <duration>', 'with --wait: how often to ask').default('1s').hideHelp())
    .addHelpText(
      'after',
      example('qm submit -f job.yaml', 'qm submit -f job.yaml --wait', "cat job.json | qm submit -f - --idempotency-key llama-ft-7-try-1") +
        '\njob.yaml:\n' +
        '  name: llama-ft-7\n  team: vision\n  replicas: 4\n  acceleratorsPerReplica: 8\n  flavors: [h100-80gb, a100-80gb]\n' +
        '  expectedRuntimeSeconds: 7200\n  template: { image: ghcr.io/acme/llama-ft:1.4, command: [python, train.py] }\n' +
        '\nWith --wait the exit code is 0 once the job runs or succeeds, 1 if it fails or is cancelled.\n',
    );
  submit.action(async (opts: { file: string; team?: string; idempotencyKey?: string; wait?: boolean; waitTimeout?: string; output?: string; pollInterval: string }) => {
    const format = outputFormat(opts.output, ['id', 'json', 'yaml'], 'id');
    const timeout = opts.waitTimeout === undefined ? undefined : parseDuration('--wait-timeout', opts.waitTimeout);
    if (timeout !== undefined && opts.wait !== true) throw new UsageError('--wait-timeout only applies with --wait');
    const poll = parseDuration('--poll-interval', opts.pollInterval);
    const job = await readJobFile(ctx.io, opts.file);
    const { client, defaultTeam } = ctx.connect();
    if (opts.team !== undefined) job.team = opts.team;
    else if (job.team === undefined && defaultTeam !== undefined) job.team = defaultTeam;
    const headers: Record<string, string> = opts.idempotencyKey === undefined ? {} : { 'idempotency-key': opts.idempotencyKey };
    const reply = await client.request<Job>('POST', '/v1/jobs', { body: job, headers });
    const created = reply.body;
    const m = machine(format, created);
    if (m !== undefined) ctx.out(m);
    else ctx.out(`${created.id}\n`);
    if (reply.status === 200) ctx.warn(`note: Idempotency-Key ${opts.idempotencyKey ?? ''} was used before with this job: nothing new was submitted`);
    if (opts.wait !== true) return;
    ctx.exit(await follow(ctx, created, poll, timeout));
  });

  program
    .command('ls')
    .alias('jobs')
    .description('list jobs, newest first: ID, NAME, TEAM, STATE, FLAVOR, REPLICAS, AGE, and for pending jobs POSITION and ETA')
    .option('--team <team>', 'only this team (default: QM_TEAM or the config\'s team, else every team you may see)')
    .option('--all-teams', 'every team you may see, ignoring the default team')
    .option('--state <states>', 'only these states, comma-separated (pending,running,…)')
    .option('--kind <kind>', 'training | eval | batch-inference | serving')
    .option('--limit <n>', 'at most this many jobs', '50')
    .option('-o, --output <format>', 'table | wide | json | yaml')
    .addHelpText('after', example('qm ls', 'qm ls --state pending,running --team vision', 'qm jobs --all-teams -o wide', 'qm ls -o json | jq -r \'.[].id\''))
    .action(async (opts: { team?: string; allTeams?: boolean; state?: string; kind?: string; limit: string; output?: string }) => {
      const format = outputFormat(opts.output, ['table', 'wide', 'json', 'yaml']);
      if (opts.allTeams === true && opts.team !== undefined) throw new UsageError('use either --team or --all-teams');
      const limit = positiveInt('--limit', opts.limit);
      const wanted = states(opts.state);
      const { client, defaultTeam } = ctx.connect();
      const team = opts.allTeams === true ? undefined : (opts.team ?? defaultTeam);
      const jobs = await listJobs(client, { team, states: wanted, kind: opts.kind, limit });
      const m = machine(format, jobs);
      if (m !== undefined) return ctx.out(m);
      if (jobs.length === 0) {
        ctx.warn(`no jobs${team !== undefined ? ` in team ${team}` : ''}${wanted ? ` in state ${wanted.join(', ').toLowerCase()}` : ''}`);
        return;
      }
      ctx.out(jobsTable(jobs, ctx.now(), format === 'wide', { timeZone: ctx.timeZone }));
    });

  program
    .command('describe')
    .description('one job in full: spec, state, placement by node, pending reason and estimate, transitions and events')
    .argument('<job>', 'job id (or a unique name)')
    .option('--team <team>', 'look the name up in this team')
    .option('-o, --output <format>', 'text | json | yaml (json: the job with its events)')
    .addHelpText('after', example('qm describe 3f2a…-…', 'qm describe llama-ft-7 -o json'))
    .action(async (ref: string, opts: { team?: string; output?: string }) => {
      const format = outputFormat(opts.output, ['text', 'json', 'yaml'], 'text');
      const { client, defaultTeam } = ctx.connect();
      const job = await resolveJob(client, ref, opts.team ?? defaultTeam);
      const events = (await client.get<List<JobEvent>>(`/v1/jobs/${seg(job.id)}/events`)).items;
      const m = machine(format, { ...job, events });
      if (m !== undefined) return ctx.out(m);
      ctx.out(describeText(job, events, ctx.now(), { timeZone: ctx.timeZone }));
    });

  program
    .command('why')
    .description('why a job is pending: reason code and message, queue position, and when it is expected to start (or why there is no estimate)')
    .argument('<job>', 'job id (or a unique name)')
    .option('--team <team>', 'look the name up in this team')
    .option('-o, --output <format>', 'text | json | yaml (json: the job\'s pending object, state and id)')
    .addHelpText('after', example('qm why 3f2a…-…', 'qm why llama-ft-7'))
    .action(async (ref: string, opts: { team?: string; output?: string }) => {
      const format = outputFormat(opts.output, ['text', 'json', 'yaml'], 'text');
      const { client, defaultTeam } = ctx.connect();
      const job = await resolveJob(client, ref, opts.team ?? defaultTeam);
      const m = machine(format, { id: job.id, name: job.name, team: job.team, state: job.state, pending: job.pending });
      if (m !== undefined) return ctx.out(m);
      ctx.out(whyText(job, ctx.now(), { timeZone: ctx.timeZone }));
    });

  program
    .command('cancel')
    .description('cancel jobs (their pods are deleted where bound); cancelling a cancelled job is a no-op')
    .argument('<job...>', 'job ids (or unique names)')
    .option('--team <team>', 'look names up in this team')
    .addHelpText('after', example('qm cancel 3f2a…-…', 'qm cancel $(qm ls --state pending -o json | jq -r \'.[].id\')'))
    .action(async (refs: string[], opts: { team?: string }) => {
      const { client, defaultTeam } = ctx.connect();
      let failed = 0;
      for (const ref of refs) {
        try {
          const job = await resolveJob(client, ref, opts.team ?? defaultTeam);
          const was = job.state;
          const after = (await client.request<Job>('DELETE', `/v1/jobs/${seg(job.id)}`)).body;
          ctx.out(was === 'CANCELLED' ? `${after.id} ${after.team}/${after.name}: already cancelled\n` : `${after.id} ${after.team}/${after.name}: cancelled (was ${was})\n`);
        } catch (error) {
          if (!(error instanceof CliFailure)) throw error;
          failed++;
          ctx.warn(`qm: ${ref}: ${error.message}`);
        }
      }
      if (failed > 0) ctx.exit(1);
    });
}

export async function listJobs(
  client: ApiClient,
  f: { team?: string; states?: JobState[]; kind?: string; limit: number },
): Promise<Job[]> {
  const one = async (state: JobState | undefined): Promise<Job[]> => {
    const out: Job[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.get<List<Job>>('/v1/jobs', { team: f.team, state, kind: f.kind, limit: Math.min(500, f.limit - out.length), cursor });
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

export function jobsTable(jobs: Job[], now: number, wide: boolean, time: { timeZone?: string }): string {
  const head = ['ID', 'NAME', 'TEAM', 'STATE', 'FLAVOR', 'REPLICAS', 'AGE', 'POSITION', 'ETA'];
  if (wide) head.push('KIND', 'PRIORITY', 'ACCELERATORS', 'REASON', 'SUBMITTED', 'BY');
  const rows = jobs.map((j) => {
    const submitted = parseTime(j.submittedAt) ?? now;
    const row = [j.id, j.name, j.team, j.state, clip(flavorText(j), wide ? 80 : 24), replicasText(j), age(submitted, now), positionCell(j), etaCell(j, now)];
    if (wide) row.push(j.kind, String(j.priority), String(accelerators(j)), j.pending?.code ?? '-', localTime(submitted, now, time), j.createdBy);
    return row;
  });
  return formatTable(head, rows, { align: 'left', rule: false });
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
  out += field('Kind', `${j.kind}, priority ${j.priority}${j.priorityClass ? ` (class ${j.priorityClass})` : ''}, ${j.preemptible ? 'preemptible' : 'not preemptible'}`);
  out += field('State', j.state + (j.preemptionCount > 0 ? ` (preempted ${j.preemptionCount}×${j.preemptedBy ? `, last by ${j.preemptedBy}` : ''})` : ''));
  out += field('Replicas', `${replicasText(j)} × ${j.acceleratorsPerReplica} accelerator(s), ${j.cpuMillisPerReplica} mCPU, ${j.memoryMiBPerReplica} MiB each`);
  out += field('Flavors', `${j.flavors.join(', ')} (${j.flavorSelection})${j.flavor ? `; admitted on ${j.flavor}` : ''}`);
  out += field('Topology', j.topology.tpuShape ? `${j.topology.level}, TPU shape ${j.topology.tpuShape}` : j.topology.level);
  out += field('Runtime', j.expectedRuntimeSeconds === null ? (j.kind === 'serving' ? 'no end (a serving job without expectedRuntimeSeconds)' : 'unknown (no expectedRuntimeSeconds)') : `expected ${durationWords(j.expectedRuntimeSeconds * 1000)}`);
  out += field('Checkpoint', j.checkpoint === null ? 'none: a preempted run restarts from the start' : `every ${durationWords(j.checkpoint.intervalSeconds * 1000)}, ${j.checkpoint.gracePeriodSeconds} s to checkpoint when evicted`);
  const done = j.progress.completedFraction;
  const saved = parseTime(j.progress.lastCheckpointAt);
  if (done !== null || saved !== null) {
    const fraction = done === null ? 'progress' : `${Math.round(done * 1000) / 10}% done`;
    out += field('Progress', `${fraction}${saved === null ? '' : ` at its last checkpoint, ${at(j.progress.lastCheckpointAt)}`}`);
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
    const byNode = new Map<string, { replicas: number[]; accelerators: number }>();
    for (const a of alloc) {
      const n = byNode.get(a.node) ?? { replicas: [], accelerators: 0 };
      n.replicas.push(a.replica);
      n.accelerators += a.accelerators;
      byNode.set(a.node, n);
    }
    out += '\nPlacement:\n';
    out += indent(formatTable(['NODE', 'REPLICAS', 'ACCELERATORS'], [...byNode].map(([node, n]) => [node, n.replicas.sort((a, b) => a - b).join(','), String(n.accelerators)]), { align: 'left', rule: false }));
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

