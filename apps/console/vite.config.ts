import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';
import { precompressDir } from '../../libs/common/src/precompress.js';

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

/** Writes `<file>.gz` and `<file>.br` next to the built files, so the API never compresses at start. */
function precompress(outDir: string): Plugin {
  return { name: 'qm-precompress', apply: 'build', async closeBundle() { await precompressDir(outDir); } };
}

/**
 * The web console: built by `npm run build` into dist/console, served by the API at /ui (apps/api/src/console).
 * Preact's JSX through Vite's own transform (no plugin); everything is bundled, nothing is fetched at run time.
 */
export default defineConfig({
  root: here('.'),
  base: '/ui/',
  publicDir: here('public'),
  // The API's generated contract (package.json "imports" maps it for Node; the console bundles its source).
  resolve: { alias: { '#api-client': here('../../libs/api-client/src/index.ts') } },
  plugins: [precompress(here('../../dist/console'))],
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
