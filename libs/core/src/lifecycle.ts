/**
 * The job lifecycle, as one transition table shared by every app.
 *
 *   PENDING ─▶ ADMITTED ─▶ BINDING ─▶ RUNNING ─▶ SUCCEEDED | FAILED
 *      ▲          │           │          │
 *      │          └───────────┴──────────┴─▶ PREEMPTED ─▶ PENDING (requeued, history kept)
 *      └── ADMITTED/BINDING that never started within the gang timeout (requeue with backoff)
 *   Any non-terminal state ─▶ CANCELLED.
 */
export const JOB_STATES = [
  'PENDING',
  'ADMITTED',
  'BINDING',
  'RUNNING',
  'SUCCEEDED',
  'FAILED',
  'CANCELLED',
  'PREEMPTED',
] as const;

export type JobState = (typeof JOB_STATES)[number];

export const TRANSITIONS: Readonly<Record<JobState, readonly JobState[]>> = {
  PENDING: ['ADMITTED', 'CANCELLED', 'FAILED'],
  // ADMITTED → RUNNING directly: standalone executors report RUNNING without a binding phase.
  ADMITTED: ['BINDING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'PREEMPTED', 'PENDING'],
  BINDING: ['RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'PREEMPTED', 'PENDING'],
  RUNNING: ['SUCCEEDED', 'FAILED', 'CANCELLED', 'PREEMPTED'],
  PREEMPTED: ['PENDING', 'CANCELLED'],
  SUCCEEDED: [],
  FAILED: [],
  CANCELLED: [],
};

/** States in which a job holds an allocation of accelerators. */
export const HOLDING_STATES: readonly JobState[] = ['ADMITTED', 'BINDING', 'RUNNING'];
export const TERMINAL_STATES: readonly JobState[] = ['SUCCEEDED', 'FAILED', 'CANCELLED'];

export function isJobState(value: unknown): value is JobState {
  return typeof value === 'string' && (JOB_STATES as readonly string[]).includes(value);
}

export function canTransition(from: JobState, to: JobState): boolean {
  return TRANSITIONS[from].includes(to);
}

export function isTerminal(state: JobState): boolean {
  return TERMINAL_STATES.includes(state);
}

export function holdsAllocation(state: JobState): boolean {
  return HOLDING_STATES.includes(state);
}

export class TransitionError extends Error {
  readonly code = 'INVALID_TRANSITION' as const;
  constructor(
    readonly from: JobState,
    readonly to: JobState,
  ) {
    super(`a job in state ${from} cannot move to ${to} (allowed: ${TRANSITIONS[from].join(', ') || 'none'})`);
  }
}

/** Throws TransitionError when the move is not in the table. */
export function assertTransition(from: JobState, to: JobState): void {
  if (!canTransition(from, to)) throw new TransitionError(from, to);
}
