import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { simulateCommand, UsageError, type CliIo, type SimulateFlags } from './simulate-command.js';

/** Exit codes: 0 ok, 1 failure (unreadable or invalid input files, I/O), 2 bad usage (flags). */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

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

export function buildProgram(io: CliIo, onExit: (code: number) => void): Command {
  const program = new Command('qm')
    .description('Quartermaster command-line client')
    .exitOverride()
    .configureOutput({ writeOut: (s) => void io.stdout.write(s), writeErr: (s) => void io.stderr.write(s) })
    .showHelpAfterError('(run with --help for usage)');

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
    .option('--reservation-depth <n>', 'blocked jobs that get a reservation', nonNegativeInt)
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
    .action(async (flags: SimulateFlags) => {
      onExit(await simulateCommand(flags, io));
    });
  return program;
}

/** Runs `qm` with the arguments after the program name; resolves to the exit code (never calls process.exit). */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  let code = EXIT_OK;
  const program = buildProgram(io, (c) => {
    code = c;
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (e) {
    if (e instanceof CommanderError) {
      // Commander already printed the message (help and version exit with 0).
      return e.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    }
    if (e instanceof UsageError) {
      io.stderr.write(`qm: ${e.message}\n`);
      return EXIT_USAGE;
    }
    io.stderr.write(`qm: ${(e as Error).message}\n`);
    return EXIT_FAILURE;
  }
}
