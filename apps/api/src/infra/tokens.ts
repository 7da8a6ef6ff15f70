/** DI tokens for things that are not classes (or not ours to decorate). */
export const LOGGER = Symbol('LOGGER');
export const REDIS = Symbol('REDIS');
/** Runs one scheduling cycle now (POST /v1/scheduler/cycles); see scheduler/cycle-runner.port.ts. */
export const CYCLE_RUNNER = Symbol('CYCLE_RUNNER');
