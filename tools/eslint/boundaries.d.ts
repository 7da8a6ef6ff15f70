import type { ESLint } from 'eslint';

/** Package → the packages it may import (besides itself). */
export declare const MAY_IMPORT: Record<string, string[]>;
declare const plugin: ESLint.Plugin;
export default plugin;
