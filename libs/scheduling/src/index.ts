// The only public door of libs/scheduling: the scheduler service's logic without NestJS —
// cycle runner, leader election, cycle loop and triggers, outbox relay, side-effect queue and workers,
// reconcile, metrics and settings.
export * from './backoff.js';
export * from './cycle-loop.js';
export * from './cycle-runner.js';
export * from './cycle-store.js';
export * from './cycle-trigger.js';
export * from './leader-elector.js';
export * from './gated-lease-store.js';
export * from './outbox-relay.js';
export * from './outbox-store.js';
export * from './phase-timer.js';
export * from './reconciler.js';
export * from './scheduler-metrics.js';
export * from './scheduler-service.js';
export * from './scheduler-settings.js';
export * from './side-effect-catalogue.js';
export * from './side-effect-handlers.js';
export * from './side-effect-queue.js';
export * from './side-effect-worker.js';
export * from './scheduler-runtime.js';
export * from './pg/pg-cycle-lock.js';
export * from './pg/pg-outbox.store.js';
export * from './pg/pg-reconcile.store.js';
export * from './manual-cycle.js';
export * from './pg/pg-cycle.store.js';
export * from './pg/pg-lease.store.js';
export * from './cycle-trigger-routes.js';
export * from './failpoints.js';
