import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

/**
 * The web console: built by `npm run build` into dist/console, served by the API at /ui (apps/api/src/console).
 * Preact's JSX through Vite's own transform (no plugin); everything is bundled, nothing is fetched at run time.
 */
export default defineConfig({
  root: here('.'),
  base: '/ui/',
  publicDir: here('public'),
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: here('../../dist/console'),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    chunkSizeWarningLimit: 400,
  },
  logLevel: 'warn',
});
