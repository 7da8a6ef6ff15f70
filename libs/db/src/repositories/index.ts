// Repositories over the database: the Prisma client for CRUD and reads, raw SQL on the hot paths (ADR 0018).
export * from './db-handle.js';
export * from './tenancy.records.js';
export * from './job.records.js';
export * from './token.repository.js';
export * from './flavor.repository.js';
export * from './cohort.repository.js';
export * from './team.repository.js';
export * from './quota.repository.js';
export * from './node.repository.js';
export * from './job.repository.js';
export * from './job-holds.repository.js';
export * from './node-drain.repository.js';
export * from './scheduler-state.repository.js';
export * from './usage.repository.js';
export * from './job-submission.js';
// Read-only views for the web console (dashboards): queue order, fleet allocation, cycle history, audit trail.
export * from './queue.repository.js';
export * from './fleet.repository.js';
export * from './cycle-history.repository.js';
export * from './audit.repository.js';
export * from './workload-job.repository.js';
export * from './job-history.repository.js';
export * from './priority-class.repository.js';
export * from './pending-limit.js';
