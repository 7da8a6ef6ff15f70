// The only public door of libs/common: configuration, error codes, problem+json, logging, names.
export * from './config.js';
export * from './http-server-options.js';
export * from './error-codes.js';
export * from './problem.js';
export * from './database-unavailable.js';
export * from './problem.filter.js';
export * from './client-error.js';
export * from './logger.js';
export * from './names.js';
export * from './concurrency.js';
export * from './readiness.js';
export { compress, compressible, ENCODINGS, precompressDir, type Encoding } from './precompress.js';
