// `npm run bench:api:revocation`: how soon a token revoked through one API replica is refused by another that
// had it cached (issue #27: within 1 s across replicas). Prints one JSON line.
//
// Two API processes over one database and one Redis prefix, each caching tokens for QM_TOKEN_CACHE_TTL_MS
// (10 minutes here: only the revocation's message can make the second refuse a token it cached). Each round:
// a member token is created through A and used twice through B (cached there); then A revokes it while B is
// asked in a loop; the figure is the time from the DELETE's start to B's first 401 (and from the DELETE's
// answer). Env: ROUNDS (50).
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { call, freePort, startApiProcess } from './api-process.js';
import { createTestDatabase } from '../../libs/db/src/testing/test-database.js';

const ROUNDS = Number(process.env['ROUNDS'] ?? 50);
const ADMIN = `bench-admin-${randomUUID()}`;
const GIVE_UP_MS = 5_000;

const whoami = async (base: string, token: string): Promise<number> => (await fetch(`${base}/v1/whoami`, { headers: { authorization: `Bearer ${token}` } })).status;

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

async function main(): Promise<void> {
  const db = await createTestDatabase({ label: 'bench_revocation' });
  const children: ChildProcess[] = [];
  try {
    const [portA, portB] = [await freePort(), await freePort()];
    const env = { QM_TOKEN_CACHE_TTL_MS: '600000', QM_REDIS_PREFIX: `qm-bench-revocation-${portA}` };
    children.push(await startApiProcess(db.url, portA, ADMIN, env));
    children.push(await startApiProcess(db.url, portB, ADMIN, env));
    const [a, b] = [`http://127.0.0.1:${portA}`, `http://127.0.0.1:${portB}`];
    await call(a, ADMIN, 'PUT', '/v1/teams/vision', {});
    const fromStart: number[] = [];
    const fromAnswer: number[] = [];
    let missed = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const { id, token } = (await call(a, ADMIN, 'POST', '/v1/tokens', { subject: `bench-${round}`, role: 'member', teams: ['vision'] })) as { id: string; token: string };
      if ((await whoami(b, token)) !== 200 || (await whoami(b, token)) !== 200) throw new Error('replica B does not accept a fresh token');
      const started = performance.now();
      let answered = Number.NaN;
      const revoke = call(a, ADMIN, 'DELETE', `/v1/tokens/${id}`).then(() => (answered = performance.now()));
      let refused = Number.NaN;
      while (performance.now() - started < GIVE_UP_MS) {
        if ((await whoami(b, token)) === 401) {
          refused = performance.now();
          break;
        }
      }
      await revoke;
      if (Number.isNaN(refused)) missed++;
      else {
        fromStart.push(refused - started);
        fromAnswer.push(Math.max(0, refused - answered));
      }
    }
    fromStart.sort((x, y) => x - y);
    fromAnswer.sort((x, y) => x - y);
    const ms = (x: number): number => Math.round(x * 10) / 10;
    console.log(
      JSON.stringify({
        bench: 'token-revocation',
        replicas: 2,
        tokenCacheTtlMs: 600_000,
        rounds: ROUNDS,
        refusedWithin5s: ROUNDS - missed,
        fromRevokeStartMs: { p50: ms(quantile(fromStart, 0.5)), p95: ms(quantile(fromStart, 0.95)), max: ms(fromStart.at(-1) ?? Number.NaN) },
        afterRevokeAnsweredMs: { p50: ms(quantile(fromAnswer, 0.5)), p95: ms(quantile(fromAnswer, 0.95)), max: ms(fromAnswer.at(-1) ?? Number.NaN) },
        loadAverage: loadavg().map((l) => Math.round(l * 100) / 100),
      }),
    );
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    await db.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
