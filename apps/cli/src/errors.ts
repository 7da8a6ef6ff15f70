/** Bad usage (flags, arguments): `qm` prints the message and exits with 2. */
export class UsageError extends Error {}

/**
 * A failure the user can act on (unreadable or invalid input file, server unreachable, an API error,
 * not logged in): `qm` prints the message on one line and exits with 1.
 */
export class CliFailure extends Error {}
