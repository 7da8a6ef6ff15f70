import type { Command } from 'commander';
import type { JobDetail } from '#api-client';
import type { CommandContext } from '../context.js';
import { CliFailure, UsageError, worstExitCode } from '../errors.js';
import { example, seg } from './common.js';
import { resolveJob } from './job-ref.js';

interface HoldFlags {
  team?: string;
  name?: string;
  user?: string;
  dryRun?: boolean;
}

/**
 * `qm hold` and `qm release` (Slurm's `scontrol hold` / `release`): a held pending job is passed over by the
 * scheduler, keeping its place, until released. Named jobs, or a team's pending jobs by filter (--name, --user).
 */
export function registerHolds(program: Command, ctx: CommandContext): void {
  for (const what of ['hold', 'release'] as const) {
    const done = what === 'hold' ? 'held' : 'released';
    program
      .command(what)
      .description(
        what === 'hold'
          ? 'hold pending jobs: the scheduler passes them over, keeping their place, until released (an admin\'s hold only an admin releases)'
          : 'release held jobs: they are considered again from the next scheduling cycle, in their old place',
      )
      .argument('[job...]', 'job ids (or unique names, or job/NAME)')
      .option('--team <team>', 'look names up in this team; with a filter, the team whose jobs are ' + done)
      .option('--name <name>', `filter: only the team's ${what === 'hold' ? 'pending' : 'held'} jobs of this name`)
      .option('--user <subject>', 'filter: only jobs this subject submitted (as `qm describe` shows in Created by)')
      .option('--dry-run', `with a filter: list the jobs it would ${what}, and change nothing`)
      .addHelpText(
        'after',
        example(`qm ${what} llama-ft-7`, `qm ${what} --name sweep-lr --team vision`, `qm ${what} --user alice --dry-run`, `qm ls --state pending -o name | xargs qm ${what}`),
      )
      .action(async (refs: string[], opts: HoldFlags) => {
        const filtered = opts.name !== undefined || opts.user !== undefined;
        if (opts.dryRun && !filtered) throw new UsageError('--dry-run goes with a filter (--name, --user)');
        if (filtered && refs.length > 0) throw new UsageError(`give jobs to ${what} or a filter (--name, --user), not both`);
        if (!filtered && refs.length === 0) throw new UsageError(`name the jobs to ${what}, or a filter: --name, --user (with --team)`);
        const { client, defaultTeam } = ctx.connect();
        if (filtered) {
          const team = opts.team ?? defaultTeam;
          if (team === undefined) throw new UsageError(`a filter ${done} one team's jobs: give --team (or set a default team with qm config)`);
          let total = 0;
          for (;;) {
            const body = { team, ...(opts.name ? { name: opts.name } : {}), ...(opts.user ? { createdBy: opts.user } : {}), ...(opts.dryRun ? { dryRun: true } : {}) };
            const r = (await client.request<{ changed: number; jobs: { id: string; name: string }[]; more: boolean }>('POST', what === 'hold' ? '/v1/jobs/holds' : '/v1/jobs/releases', { body })).body;
            if (opts.dryRun) {
              for (const j of r.jobs) ctx.out(`${j.id} ${team}/${j.name}: would be ${done}\n`);
              ctx.warn(`qm: dry run: ${r.jobs.length}${r.more ? '+' : ''} job(s) of team ${team} would be ${done}`);
              return;
            }
            for (const j of r.jobs) ctx.out(`${j.id} ${team}/${j.name}: ${done}\n`);
            total += r.changed;
            if (!r.more || r.changed === 0) break;
          }
          ctx.warn(`qm: ${done} ${total} job(s) of team ${team}`);
          return;
        }
        const failures: CliFailure[] = [];
        for (const ref of refs) {
          try {
            const job = await resolveJob(client, ref, opts.team ?? defaultTeam);
            const wasHeld = job.hold != null;
            const after = (await client.request<JobDetail>('POST', `/v1/jobs/${seg(job.id)}/${what}`)).body;
            const same = what === 'hold' ? wasHeld : !wasHeld;
            ctx.out(`${after.id} ${after.team}/${after.name}: ${same ? `already ${what === 'hold' ? 'held' : 'not held'}` : done}\n`);
          } catch (error) {
            if (!(error instanceof CliFailure)) throw error;
            failures.push(error);
            ctx.warn(`qm: ${ref}: ${error.message}`);
          }
        }
        if (failures.length > 0) ctx.exit(worstExitCode(failures));
      });
  }
}
