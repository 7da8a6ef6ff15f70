import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { registerAccounting } from './commands/accounting.js';
import { registerAudit } from './commands/audit.js';
import { registerCompletion } from './commands/completion.js';
import { registerExecutor } from './commands/executor.js';
import { registerHistory } from './commands/history.js';
import { registerJobs } from './commands/jobs.js';
import { registerHolds } from './commands/holds.js';
import { registerSession } from './commands/session.js';
import { registerTenancy } from './commands/tenancy.js';
import { registerTenancyAdmin } from './commands/tenancy-admin.js';
import { registerPriorityClasses } from './commands/priority-classes.js';
import { registerTokens } from './commands/tokens.js';
import { CommandContext } from './context.js';
import { CliFailure, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, UsageError } from './errors.js';
import type { QmIo } from './io.js';
import type { SimulateFlags } from './simulate-command.js';

/**
 * Exit codes (errors.ts): 0 ok; 1 failure (server error, unreachable, forbidden, not found, unreadable
 * files, I/O); 2 bad input (unknown command or flag, missing or malformed argument, a job file that is not a
 * job, and every 400/422 of the API).
 */
export { EXIT_FAILURE, EXIT_OK, EXIT_USAGE };

const nonNegative = (v: string): number => {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < 0) throw new InvalidArgumentError('must be a non-negative number');
  return n;
};
const positiveInt = (v: string): number => {
  const n = Number(v);
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n <= 0) throw new InvalidArgumentError('must be a positive integer');
  return n;
};
const nonNegativeInt = (v: string): number => {
  const n = Number(v);
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(n)) throw new InvalidArgumentError('must be a non-negative integer');
  return n;
};
const collect = (v: string, acc: string[] | undefined): string[] => [...(acc ?? []), v];

/** The package's version (its package.json at `root`), or `unknown` for a copy without it. */
function qmVersion(root: string): string {
  try {
    return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version?: string }).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

export function buildProgram(io: QmIo, onExit: (code: number) => void): { program: Command; context: CommandContext } {
  const program = new Command('qm')
    .description('Quartermaster command-line client: submit and follow jobs, see quotas, usage and budgets, simulate policies')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => void io.stdout.write(s),
      writeErr: (s) => void io.stderr.write(s),
      // Commander's own errors (unknown flag, missing argument) as one line, like every other error.
      outputError: (s, write) => write(`qm: ${s.replace(/^error: /, '').trim().replace(/\s*\n\s*/g, ' ')} (run with --help for usage)\n`),
    })
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .version(`qm ${qmVersion(io.repoRoot)} (REST API v1)`, '-V, --version', 'print the version of qm and the API it speaks, and exit')
    .option('--server <url>', 'API URL (default: QM_SERVER, else the config file from qm login)')
    .option('--token <token>', 'bearer token (default: QM_TOKEN, else the config file)')
    .addHelpText(
      'after',
      '\nExamples:\n  $ qm login --server http://localhost:8080 --token qm_…\n  $ qm submit -f job.yaml --wait\n' +
        '  $ qm submit --name llama-ft-8 --team vision --gpus 8 --image ghcr.io/acme/llama-ft:1.4 -- python train.py\n' +
        '  $ qm ls -w\n  $ qm queue\n  $ qm why llama-ft-7\n' +
        '\nExit codes: 0 ok; 1 failure (server error, unreachable, forbidden, not found, unreadable file);\n' +
        '2 bad input (unknown command or flag, bad value, a job file that is not a job, the API\'s 400/422 naming a field).\n' +
        'Config: $XDG_CONFIG_HOME/quartermaster/config.yaml (mode 0600); QM_SERVER, QM_TOKEN, QM_TEAM override it.\n',
    );
  const context = new CommandContext(io, program);
  registerSession(program, context);
  registerTokens(program, context);
  registerJobs(program, context);
  registerHolds(program, context);
  registerExecutor(program, context);
  registerTenancy(program, context);
  registerTenancyAdmin(program, context);
  registerPriorityClasses(program, context);
  registerAccounting(program, context);
  registerAudit(program, context);
  registerHistory(program, context);

  program
    .command('simulate')
    .description('replay a cluster trace through the scheduling core and report queueing, JCT, utilization and fairness')
    .exitOverride()
    .addOption(new Option('--trace <kind>', 'trace format').choices(['philly', 'gavel']).default('philly'))
    .option('--trace-file <path>', 'Philly CSV, or Gavel .trace file/directory (repeatable); default: from the traces directory', collect)
    .option('--throughputs <path>', 'Gavel simulation_throughputs.json (default: from the traces directory)')
    .option('--cluster <file>', 'cluster file (YAML/JSON: flavors and node groups); default: derived for the trace')
    .option('--tenancy <file>', 'tenancy file (YAML/JSON: cohorts, teams, quotas); default: one cohort, quotas ∝ philly_vc_nodes.csv')
    .option('--policy <name>', 'full | fifo | one-per-queue | hetero-agnostic | no-preemption | no-reservation (default full)')
    .option('--policies <list>', "several policies, comma-separated, or 'all': prints a comparison table")
    .option('--cycle-interval <seconds>', 'scheduling cycle grid in virtual seconds (0 = at every change)', nonNegative, 10)
    .option('--checkpoint-interval <seconds>', 'a preempted job keeps progress up to its last checkpoint (0 = restarts)', nonNegative, 0)
    .option('--checkpoint-grace <seconds>', 'with checkpoints: a preempted or moved job runs on this long and checkpoints at its end; its replacement starts then', nonNegative, 0)
    .option('--reservation-depth <n>', 'blocked jobs that get a reservation', nonNegativeInt)
    .option('--slower-flavor-delay <weight>', "a 'fastest' job starts on a slower flavor now only when it gains more than this × the delay its slower run causes the other waiting jobs (default 3; 0 = its own finish alone)", nonNegative)
    .addOption(new Option('--ordering <order>', 'queue order within a team: fifo (submission) or shortest-first (least expected work, aged by wait); every policy').choices(['fifo', 'shortest-first']))
    .option('--min-runtime <seconds>', 'a job cannot be preempted before running this long', nonNegative)
    .option('--limit <n>', 'only the first n jobs by arrival', positiveInt)
    .option('--speed-floor <ratio>', 'jobs accept only flavors where they run at ≥ ratio × their best speed (0–1; heterogeneity-aware submitters)', nonNegative)
    .option('--seed <n>', 'seed of the random flavor choice (hetero-agnostic)', nonNegativeInt, 1)
    .option('--quota <team/flavor=n>', 'what-if: set a nominal quota (repeatable)', collect, [])
    .option('--nodes <flavor=±n>', 'what-if: add or remove nodes of a flavor (repeatable)', collect, [])
    .option('--from-db', 'replay recent jobs from Postgres instead of a trace')
    .option('--since <duration>', 'with --from-db: how far back, e.g. 7d')
    .option('--json', 'print the metrics JSON on stdout instead of tables')
    .option('--out <file>', 'write the metrics JSON to a file')
    .option('--report <file>', 'write a self-contained HTML report')
    .option('--no-progress', 'no progress bar on stderr')
    .addHelpText('after', '\nExamples:\n  $ qm simulate --trace philly --limit 2000\n  $ qm simulate --trace-file jobs.csv --cluster cluster.yaml --policies all --report report.html\n')
    .action(async (flags: SimulateFlags) => {
      // Loaded on use: the simulator is a large module graph the API commands do not need.
      const { simulateCommand } = await import('./simulate-command.js');
      onExit(await simulateCommand(flags, io));
    });
  registerCompletion(program, context);
  return { program, context };
}

/** Runs `qm` with the arguments after the program name; resolves to the exit code (never calls process.exit). */
export async function runCli(argv: string[], io: QmIo): Promise<number> {
  let code = EXIT_OK;
  const { program, context } = buildProgram(io, (c) => {
    code = c;
  });
  context.argv = argv;
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code !== EXIT_OK ? code : context.exitCode;
  } catch (e) {
    if (e instanceof CommanderError) {
      // Commander already printed the message (help and version exit with 0).
      return e.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    }
    if (e instanceof UsageError || e instanceof CliFailure) {
      io.stderr.write(`qm: ${e.message}\n`);
      return e.exitCode;
    }
    // Input errors of the simulator's loaders, or a bug: still one line.
    io.stderr.write(`qm: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}\n`);
    return EXIT_FAILURE;
  }
}
