/**
 * Exit codes of `qm`: scripts tell "your input was wrong" (2) from "it failed" (1).
 *
 * - 0: ok.
 * - 1: failure: the server is unreachable or answered an error other than 400/422 (401, 403, 404, 409, 5xx),
 *   a file could not be read, the config file is broken, a job ended badly under --wait.
 * - 2: bad input: an unknown command or flag, a missing or malformed argument or flag value, a job file whose
 *   content is not a job, and every 400 or 422 of the API (problem+json naming the offending fields).
 */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** Bad usage (flags, arguments, input content): `qm` prints the message and exits with 2. */
export class UsageError extends Error {
  readonly exitCode: number = EXIT_USAGE;
}

/**
 * A failure the user can act on (unreadable input file, server unreachable, an API error, not logged in):
 * `qm` prints the message on one line and exits with `exitCode` (1, or 2 for input the server refused).
 */
export class CliFailure extends Error {
  get exitCode(): number {
    return EXIT_FAILURE;
  }
}

/**
 * Input that is wrong but only shows once it is read (a job file that is not a job): a CliFailure (commands
 * that go on past failures catch it like the others) that exits with 2 like a usage error.
 */
export class InputError extends CliFailure {
  override get exitCode(): number {
    return EXIT_USAGE;
  }
}

/** The exit code an error ends `qm` with: 2 for usage and input errors (ours or the API's 400/422), else 1. */
export function exitCodeOf(error: unknown): number {
  if (error instanceof UsageError || error instanceof CliFailure) return error.exitCode;
  return EXIT_FAILURE;
}

/** Several failures of one command (`qm cancel a b c`): 1 if any failed for another reason than bad input, else 2. */
export function worstExitCode(errors: readonly unknown[]): number {
  if (errors.length === 0) return EXIT_OK;
  return errors.every((e) => exitCodeOf(e) === EXIT_USAGE) ? EXIT_USAGE : EXIT_FAILURE;
}
