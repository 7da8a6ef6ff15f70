/**
 * The scheduler lease moved on (another holder, or a newer token) since this process last held it:
 * its decisions must not be written. Thrown by commitCycle before anything is written.
 */
export class FencingError extends Error {
  readonly code = 'FENCING_TOKEN_STALE' as const;
  constructor(
    readonly leaseName: string,
    readonly expectedToken: bigint,
    /** The lease row now: `null` when there is none. */
    readonly actual: { holder: string; fencingToken: bigint } | null,
  ) {
    super(
      actual === null
        ? `lease ${leaseName} does not exist; refusing to commit with fencing token ${expectedToken}`
        : `lease ${leaseName} is at fencing token ${actual.fencingToken} (holder ${actual.holder}); refusing to commit with stale token ${expectedToken}`,
    );
    this.name = 'FencingError';
  }
}

/** A cycle result that cannot be written as given (a programming error in the caller, not a race). */
export class InvalidCycleResultError extends Error {
  readonly code = 'INVALID_CYCLE_RESULT' as const;
  constructor(message: string) {
    super(message);
    this.name = 'InvalidCycleResultError';
  }
}
