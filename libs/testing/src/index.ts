// The only public door of libs/testing: helpers for tests and benchmarks (never imported by production code).
export * from './arbitraries.js';
export * from './cycle-driver.js';
export * from './builders.js';
