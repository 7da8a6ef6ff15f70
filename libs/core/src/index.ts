// The only public door of libs/core. Pure TypeScript: no framework, no I/O, no clock.
export * from './model.js';
export * from './lifecycle.js';
export * from './invariants.js';
