// The house's dependency graph as an ESLint rule: what each library and app may import, resolved from the
// import's text (a `#name` alias of package.json "imports", or a relative path that leaves its package).
//
//   common, core, api-client  ←  db, kube, sim, testing  ←  scheduling  ←  apps
//
// libs/kube reaches the database only through ports that apps/scheduler wires; no app imports another but
// apps/server, npm start's composition root;
// the console bundles only the API's contract. Tests and benchmarks (test/, bench/) may import anything;
// a library's own *.spec.ts may also use libs/testing.
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../..');

const LIBS = ['common', 'core', 'api-client', 'db', 'kube', 'sim', 'testing', 'scheduling'].map((l) => `libs/${l}`);
const APP_MAY_USE = ['libs/common', 'libs/core', 'libs/api-client', 'libs/db', 'libs/kube', 'libs/sim', 'libs/scheduling'];

/** Package → the packages it may import (besides itself). */
export const MAY_IMPORT = {
  'libs/common': [],
  'libs/api-client': [],
  'libs/core': ['libs/common'],
  'libs/db': ['libs/common', 'libs/core'],
  'libs/kube': ['libs/common', 'libs/core'],
  'libs/sim': ['libs/common', 'libs/core'],
  'libs/testing': ['libs/common', 'libs/core'],
  'libs/scheduling': ['libs/common', 'libs/core', 'libs/db', 'libs/kube', 'libs/sim'],
  'apps/api': APP_MAY_USE,
  'apps/scheduler': APP_MAY_USE,
  'apps/cli': APP_MAY_USE,
  // The composition root of `npm start`: the API and the scheduler in one process.
  'apps/server': [...APP_MAY_USE, 'apps/api', 'apps/scheduler'],
  // The console's bundle takes only the API's contract; its build (vite.config.ts) also the precompression.
  'apps/console': ['libs/api-client', 'libs/common'],
};

/** `apps/x` or `libs/x` holding a repository-relative path, or null (tests, benchmarks, scripts). */
function packageOf(relative) {
  const [top, name] = relative.split(path.sep);
  return (top === 'apps' || top === 'libs') && name ? `${top}/${name}` : null;
}

/** The package an import points into, or null for a third-party module or a file outside apps/ and libs/. */
function targetOf(source, file) {
  if (source.startsWith('#')) {
    const lib = `libs/${source.slice(1).split('/')[0]}`;
    return LIBS.includes(lib) ? lib : null;
  }
  if (!source.startsWith('.')) return null;
  return packageOf(path.relative(root, path.resolve(path.dirname(file), source)));
}

const dag = {
  meta: {
    type: 'problem',
    docs: { description: 'Imports follow the dependency graph of apps and libraries (tools/eslint/boundaries.js).' },
    schema: [],
    messages: {
      forbidden: '{{from}} may not import {{to}}: {{why}}',
    },
  },
  create(context) {
    const file = context.filename;
    const from = packageOf(path.relative(root, file));
    if (from === null || !(from in MAY_IMPORT)) return {};
    const spec = /\.spec\.tsx?$/.test(file);
    const check = (node, source) => {
      if (typeof source !== 'string') return;
      const to = targetOf(source, file);
      if (to === null || to === from) return;
      if (MAY_IMPORT[from].includes(to) || (spec && to === 'libs/testing')) return;
      const why = to.startsWith('apps/')
        ? 'an app never imports another app (share it through a library)'
        : from === 'libs/kube' && to === 'libs/db'
          ? 'libs/kube talks to the database only through ports that apps/scheduler wires'
          : `it may import only ${MAY_IMPORT[from].join(', ') || 'third-party modules'}`;
      context.report({ node, messageId: 'forbidden', data: { from, to, why } });
    };
    return {
      ImportDeclaration: (node) => check(node.source, node.source.value),
      ExportNamedDeclaration: (node) => node.source && check(node.source, node.source.value),
      ExportAllDeclaration: (node) => check(node.source, node.source.value),
      ImportExpression: (node) => node.source.type === 'Literal' && check(node.source, node.source.value),
    };
  },
};

/** The Prisma client belongs to libs/db: elsewhere, `<database>.prisma` is a query outside the data layer. */
const noPrismaOutsideDb = {
  meta: {
    type: 'problem',
    docs: { description: 'Only libs/db uses the Prisma client.' },
    schema: [],
    messages: { prisma: 'The Prisma client is used only in libs/db: add a repository method there.' },
  },
  create(context) {
    if (packageOf(path.relative(root, context.filename)) === 'libs/db') return {};
    return {
      'MemberExpression[property.name="prisma"]': (node) => context.report({ node, messageId: 'prisma' }),
    };
  },
};

export default { rules: { dag, 'no-prisma-outside-db': noPrismaOutsideDb } };
