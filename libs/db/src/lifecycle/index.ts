// The lifecycle's transition writer (the only writer of jobs.state) and the outbox catalogue.
export * from './outbox-kinds.js';
export { canMove, moveJobs, LIFECYCLE_SQL, type JobEventKind, type JobMove, type MoveJobsOptions, type MoveJobsResult, type MoveResult, type Placement } from './transition-writer.js';
