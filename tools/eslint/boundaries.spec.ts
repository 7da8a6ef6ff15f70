import { describe, expect, it } from '@jest/globals';
import { ESLint } from 'eslint';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import tseslint from 'typescript-eslint';
import boundaries from './boundaries.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

// The two rules alone, over files that need not exist (the repository's own lint runs them on every file).
const eslint = new ESLint({
  cwd: root,
  overrideConfigFile: true,
  overrideConfig: [
    {
      files: ['**/*.ts'],
      languageOptions: { parser: tseslint.parser },
      plugins: { boundaries },
      rules: { 'boundaries/dag': 'error', 'boundaries/no-prisma-outside-db': 'error' },
    },
  ],
});

async function problems(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return (result?.messages ?? []).map((m) => `${m.ruleId ?? 'parse'}: ${m.message}`);
}

describe('the dependency graph as a lint rule', () => {
  it.each([
    ['libs/kube/src/x.ts', "import { Database } from '#db';", 'libs/kube may not import libs/db: libs/kube talks to the database only through ports'],
    ['libs/core/src/x.ts', "import { Database } from '#db';", 'libs/core may not import libs/db'],
    ['libs/core/src/x.ts', "import { makeJob } from '#testing';", 'libs/core may not import libs/testing'],
    ['libs/db/src/x.ts', "export { runCycle } from '#scheduling';", 'libs/db may not import libs/scheduling'],
    ['libs/sim/src/x.ts', "import { x } from '../../kube/src/index.js';", 'libs/sim may not import libs/kube'],
    ['apps/scheduler/src/x.ts', "import { createApiApp } from '../../api/src/api-app.js';", 'apps/scheduler may not import apps/api: an app never imports another app'],
    ['apps/api/src/jobs/x.ts', "const m = await import('../../../cli/src/main.js');", 'apps/api may not import apps/cli'],
    ['apps/console/src/x.ts', "import { Database } from '#db';", 'apps/console may not import libs/db'],
    ['apps/cli/src/x.ts', 'export const rows = (db: { prisma: { job: { findMany(): unknown } } }) => db.prisma.job.findMany();', 'The Prisma client is used only in libs/db'],
  ])('%s: %s is refused', async (file, code, message) => {
    const found = await problems(file, code);
    expect(found).toHaveLength(1);
    expect(found[0]).toContain(message);
  });

  it.each([
    ['libs/scheduling/src/x.ts', "import { Database } from '#db';\nimport { runCycle } from '#core';"],
    ['libs/core/src/x.spec.ts', "import { makeJob } from '#testing';"],
    ['libs/db/src/x.ts', 'export const rows = (db: { prisma: { job: { findMany(): unknown } } }) => db.prisma.job.findMany();'],
    ['apps/server/src/main.ts', "const { createApiApp } = await import('../../api/src/api-app.js');\nimport { startRole } from '../../scheduler/src/bootstrap.js';"],
    ['apps/console/src/x.ts', "import type { Job } from '#api-client';"],
    ['apps/api/src/jobs/x.ts', "import { a } from '../common.js';\nimport { Injectable } from '@nestjs/common';"],
    ['test/e2e/x.test.ts', "import { createApiApp } from '../../apps/api/src/api-app.js';\nimport { Database } from '#db';"],
  ])('%s: allowed', async (file, code) => {
    expect(await problems(file, code)).toEqual([]);
  });
});
