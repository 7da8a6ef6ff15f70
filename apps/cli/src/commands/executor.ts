import type { Command } from 'commander';
import type { JobDetail, JobProgressReport, JobStatusReport } from '#api-client';
import type { CommandContext } from '../context.js';
import { UsageError } from '../errors.js';
import { example, seg } from './common.js';
import { resolveJob } from './job-ref.js';
import { progressText } from './job-text.js';

/** The states an executor reports (POST /v1/jobs/{id}/status); the compiler fails here when the API changes them. */
export const REPORTED_STATES = ['RUNNING', 'SUCCEEDED', 'FAILED'] as const satisfies readonly JobStatusReport['state'][];
const allReported: Exclude<JobStatusReport['state'], (typeof REPORTED_STATES)[number]> extends never ? true : never = true;
void allReported;

/** The API's bounds on a report: a reason of at most 1024 characters; a checkpoint at most a minute ahead of its clock. */
const MAX_REASON = 1024;
const CLOCK_SKEW_MS = 60_000;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/** The executor contract, as the scheduler enforces it (apps/scheduler/README.md, reconcile step 3). */
export const EXECUTOR_CONTRACT =
  '\nThe executor contract (standalone mode, without Kubernetes): once the scheduler admits a job (qm ls --state admitted),\n' +
  'its executor starts it and reports RUNNING within the gang timeout: 5 minutes from admission by default (the scheduler\'s\n' +
  'QM_GANG_TIMEOUT_MS). Otherwise the scheduler requeues the job: back to PENDING, its accelerators released, not admitted\n' +
  'again before a backoff, and the accelerator-hours it held count as wasted (qm usage, WASTED). At the end it reports\n' +
  'SUCCEEDED or FAILED (--reason: what qm why shows). While it runs it reports progress at each checkpoint: preemption\n' +
  'picks the jobs that lose the least work since their last checkpoint, and a requeued job expects only the rest.\n' +
  'Executor tokens (qm token create NAME --role executor --teams TEAM) read their teams\' jobs and report these, nothing else;\n' +
  'give them as QM_TOKEN (and QM_SERVER) or through qm login.\n';

/** `qm executor status|progress`: what a job's executor outside Kubernetes reports, from a shell script. */
export function registerExecutor(program: Command, ctx: CommandContext): void {
  const executor = program
    .command('executor')
    .description("report a job's state and progress from its executor outside Kubernetes (executor or admin token)")
    .addHelpText('after', example('qm executor status llama-ft-7 running', 'qm executor progress llama-ft-7 --completed-fraction 0.4 --checkpoint') + EXECUTOR_CONTRACT);

  executor
    .command('status')
    .description("report the job's state: running once it started (within the gang timeout, 5 min by default), then succeeded or failed")
    .argument('<job>', 'job id (or a unique name, or job/NAME)')
    .argument('<state>', 'running | succeeded | failed')
    .option('--reason <text>', 'why (at most 1024 characters), e.g. exit code 137; qm why shows it')
    .option('--team <team>', 'look the name up in this team')
    .addHelpText(
      'after',
      example(
        'qm executor status llama-ft-7 running',
        'qm executor status llama-ft-7 succeeded --reason "exit code 0"',
        'qm executor status 3f2a…-… failed --reason "exit code 137 (OOMKilled) in replica 0"',
      ) +
        '\nReporting the state the job is already in changes nothing (exit 0); a change the lifecycle does not allow\n' +
        '(a job that is PENDING, CANCELLED or already finished) is refused with the API\'s reason (exit 1).\n' +
        EXECUTOR_CONTRACT,
    )
    .action(async (ref: string, stateText: string, opts: { reason?: string; team?: string }) => {
      const state = REPORTED_STATES.find((s) => s === stateText.trim().toUpperCase());
      if (state === undefined) throw new UsageError(`state '${stateText}': expected ${REPORTED_STATES.map((s) => s.toLowerCase()).join(', ')}`);
      if (opts.reason !== undefined && opts.reason.length > MAX_REASON) throw new UsageError(`--reason: at most ${MAX_REASON} characters (this one has ${opts.reason.length})`);
      const body: JobStatusReport = { state, ...(opts.reason === undefined ? {} : { reason: opts.reason }) };
      const { client, defaultTeam } = ctx.connect();
      const job = await resolveJob(client, ref, opts.team ?? defaultTeam);
      const after = (await client.request<JobDetail>('POST', `/v1/jobs/${seg(job.id)}/status`, { body })).body;
      ctx.out(job.state === after.state ? `${after.id} ${after.team}/${after.name}: already ${after.state}\n` : `${after.id} ${after.team}/${after.name}: ${after.state} (was ${job.state})\n`);
    });

  executor
    .command('progress')
    .description("report the job's last checkpoint and the fraction of its work done then (at least one of the two)")
    .argument('<job>', 'job id (or a unique name, or job/NAME)')
    .option('--completed-fraction <f>', 'fraction of its work done at the checkpoint, 0 to 1 (completedFraction)')
    .option('--checkpoint', 'it wrote a checkpoint just now (lastCheckpointAt: now)')
    .option('--last-checkpoint-at <time>', 'when it last wrote a checkpoint, RFC 3339 (lastCheckpointAt), e.g. 2026-12-02T08:00:00Z')
    .option('--team <team>', 'look the name up in this team')
    .addHelpText(
      'after',
      example(
        'qm executor progress llama-ft-7 --completed-fraction 0.4 --checkpoint',
        'qm executor progress llama-ft-7 --last-checkpoint-at 2026-12-02T08:00:00Z',
        'qm executor progress 3f2a…-… --completed-fraction 0.75',
      ) +
        '\nAccepted while the job holds its accelerators (admitted, binding, running), or, preempted or moved, within its\n' +
        "checkpoint grace period; refused otherwise with the API's reason (exit 1).\n" +
        EXECUTOR_CONTRACT,
    )
    .action(async (ref: string, opts: { completedFraction?: string; checkpoint?: boolean; lastCheckpointAt?: string; team?: string }) => {
      const body = progressReport(opts, ctx.now());
      const { client, defaultTeam } = ctx.connect();
      const job = await resolveJob(client, ref, opts.team ?? defaultTeam);
      const after = (await client.request<JobDetail>('POST', `/v1/jobs/${seg(job.id)}/progress`, { body })).body;
      ctx.out(`${after.id} ${after.team}/${after.name}: ${progressText(after, ctx.now(), { timeZone: ctx.timeZone }) ?? 'no progress recorded'}\n`);
    });
}

/** The report from the flags, checked as the API checks it (exit 2 naming the flag). */
function progressReport(opts: { completedFraction?: string; checkpoint?: boolean; lastCheckpointAt?: string }, now: number): JobProgressReport {
  if (opts.checkpoint === true && opts.lastCheckpointAt !== undefined) throw new UsageError('use either --checkpoint (now) or --last-checkpoint-at TIME');
  if (opts.completedFraction === undefined && opts.checkpoint !== true && opts.lastCheckpointAt === undefined) {
    throw new UsageError('give --completed-fraction, --checkpoint or --last-checkpoint-at (or a fraction and a checkpoint)');
  }
  const body: JobProgressReport = {};
  if (opts.completedFraction !== undefined) {
    const text = opts.completedFraction.trim();
    const f = Number(text);
    if (!/^(\d+(\.\d*)?|\.\d+)$/.test(text) || f > 1) throw new UsageError(`--completed-fraction '${opts.completedFraction}': expected a number from 0 to 1, e.g. 0.4`);
    body.completedFraction = f;
  }
  if (opts.checkpoint === true) body.lastCheckpointAt = new Date(now).toISOString();
  if (opts.lastCheckpointAt !== undefined) {
    const at = opts.lastCheckpointAt.trim();
    const ms = Date.parse(at);
    if (!RFC3339.test(at) || Number.isNaN(ms)) throw new UsageError(`--last-checkpoint-at '${opts.lastCheckpointAt}': expected an RFC 3339 time such as 2026-12-02T08:00:00Z`);
    if (ms > now + CLOCK_SKEW_MS) throw new UsageError(`--last-checkpoint-at '${opts.lastCheckpointAt}': must not be in the future`);
    body.lastCheckpointAt = at;
  }
  return body;
}
