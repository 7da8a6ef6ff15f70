// The only public door of libs/sim: the trace simulator (discrete events, driven by the core's runCycle).
export * from './types.js';
export * from './event-queue.js';
export * from './engine.js';
export * from './validate.js';
export * from './philly-trace.js';
export * from './gavel-trace.js';
export * from './cluster-file.js';
export * from './tenancy-file.js';
export * from './load.js';
export * from './metrics.js';
export * from './policies.js';
export * from './simulate.js';
export * from './what-if.js';
export * from './html-report.js';
export * from './history-trace.js';
export * from './speed-floor.js';
export * from './optimal-capacity.js';
