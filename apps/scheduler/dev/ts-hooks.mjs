// Node module hooks that run the TypeScript sources directly (no build): `.ts` files are transpiled by
// SWC (the same settings as Jest), and a relative `./x.js` import resolves to `./x.ts` when only that
// exists; `#core` & co (package.json "imports") resolve to their TypeScript entry (the "types" target).
// Dev and test use only (child processes of the scheduler's crash tests); production runs dist/.
import { transform } from '@swc/core';
import { existsSync } from 'node:fs';
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = new URL('../../../', import.meta.url);
const imports = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')).imports ?? {};

export async function resolve(specifier, context, nextResolve) {
  const entry = specifier.startsWith('#') ? imports[specifier] : undefined;
  if (entry && typeof entry.types === 'string' && !context.parentURL?.includes('/node_modules/')) {
    return nextResolve(pathToFileURL(fileURLToPath(new URL(entry.types, root))).href, context);
  }
  if ((specifier.startsWith('.') || specifier.startsWith('/')) && specifier.endsWith('.js') && context.parentURL?.startsWith('file:')) {
    const candidate = new URL(specifier.replace(/\.js$/, '.ts'), context.parentURL);
    if (!existsSync(fileURLToPath(new URL(specifier, context.parentURL))) && existsSync(fileURLToPath(candidate))) {
      return nextResolve(candidate.href, context);
    }
  }
  return nextResolve(specifier, context);
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
  const { source } = await nextLoad(url, { ...context, format: 'module' });
  const { code } = await transform(String(source), {
    filename: fileURLToPath(url),
    sourceMaps: 'inline',
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
      keepClassNames: true,
    },
    module: { type: 'es6' },
  });
  return { format: 'module', source: code, shortCircuit: true };
}
