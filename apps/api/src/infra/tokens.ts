/** DI tokens for things that are not classes (or not ours to decorate). */
export const LOGGER = Symbol('LOGGER');
export const REDIS = Symbol('REDIS');
/** The key prefix of this deployment in Redis (QM_REDIS_PREFIX, as the scheduler's): shared state of every API replica goes under it. */
export const REDIS_PREFIX = Symbol('REDIS_PREFIX');
/** Runs one scheduling cycle now (POST /v1/scheduler/cycles); see scheduler/cycle-runner.port.ts. */
export const CYCLE_RUNNER = Symbol('CYCLE_RUNNER');
