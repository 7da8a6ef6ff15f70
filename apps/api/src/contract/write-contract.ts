import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { contractFiles } from './contract.js';

/**
 * `npm run api:contract`: writes the API's contract into libs/api-client — openapi.json, generated from the
 * controllers and DTOs, and src/schema.ts, its TypeScript types (the CLI and the console are typed by
 * them). With `--check` it writes nothing and exits 1 when either file is not what the code generates.
 */
const here = dirname(fileURLToPath(import.meta.url));
// From apps/api/src/contract (sources) or dist/apps/api/src/contract (built) to the repository.
const root = resolve(here, here.includes('/dist/') ? '../../../../..' : '../../../..');
const out = join(root, 'libs/api-client');
const check = process.argv.includes('--check');
const stale: string[] = [];
for (const [name, text] of Object.entries(await contractFiles()) as [string, string][]) {
  const path = join(out, name);
  if ((await readFile(path, 'utf8').catch(() => null)) === text) continue;
  stale.push(join('libs/api-client', name));
  if (!check) {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, text);
  }
}
if (check && stale.length > 0) {
  process.stderr.write(`the API contract changed: ${stale.join(', ')} differ from what the code generates; run npm run api:contract and commit them\n`);
  process.exit(1);
}
process.stdout.write(stale.length === 0 ? 'api contract: up to date\n' : `api contract: wrote ${stale.join(', ')}\n`);
process.exit(0);
