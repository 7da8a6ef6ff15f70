import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Database, createTestDatabase, flavorKindFromDb, flavorKindToDb, jobKindToDb, type TestDatabase } from '#db';

// Databases are created and migrated per test on a shared, sometimes busy server: no 5 s default.
jest.setTimeout(60_000);

let testDb: TestDatabase;
let db: Database;

beforeAll(async () => {
  testDb = await createTestDatabase({ label: 'client' });
  db = new Database(testDb.url);
});

afterAll(async () => {
  await db.close();
  await testDb.drop();
});

describe('Database (Prisma client and raw pool on one connection pool)', () => {
  it('writes through Prisma and reads the API spelling of enums through raw SQL', async () => {
    await db.prisma.flavor.create({
      data: {
        name: 'h100-80gb',
        kind: flavorKindToDb('nvidia-gpu'),
        resourceName: 'nvidia.com/gpu',
        nodeLabels: { 'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3' },
        memoryGiB: 80,
        relativeSpeed: 1,
        costPerHour: 4,
      },
    });
    await db.prisma.team.create({ data: { name: 'vision' } });
    const job = await db.prisma.job.create({
      data: {
        name: 'llama-ft-7',
        team: 'vision',
        kind: jobKindToDb('batch-inference'),
        replicas: 4,
        minReplicas: 2,
        acceleratorsPerReplica: 8,
        flavors: ['h100-80gb'],
        template: { image: 'x' },
        createdBy: 'alice',
      },
    });
    expect(job.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(job.state).toBe('PENDING');
    expect(job.version).toBe(0);

    const raw = await db.pool.query<{ kind: string; job_kind: string }>(
      `SELECT f.kind::text AS kind, j.kind::text AS job_kind FROM flavors f, jobs j WHERE j.id = $1`,
      [job.id],
    );
    expect(raw.rows).toEqual([{ kind: 'nvidia-gpu', job_kind: 'batch-inference' }]);

    const flavor = await db.prisma.flavor.findUniqueOrThrow({ where: { name: 'h100-80gb' } });
    expect(flavorKindFromDb(flavor.kind)).toBe('nvidia-gpu');
  });

  it('refuses a job for an unknown team (foreign key), writing nothing', async () => {
    await expect(
      db.prisma.job.create({
        data: {
          name: 'orphan', team: 'nope', kind: 'training', replicas: 1, minReplicas: 1,
          acceleratorsPerReplica: 1, flavors: ['h100-80gb'], template: {}, createdBy: 'alice',
        },
      }),
    ).rejects.toThrow();
    expect(await db.prisma.job.count({ where: { name: 'orphan' } })).toBe(0);
  });

  it('applies a statement timeout when asked', async () => {
    const limited = new Database(testDb.url, { statementTimeoutMs: 100 });
    try {
      await expect(limited.pool.query('SELECT pg_sleep(5)')).rejects.toThrow(/statement timeout/);
      await expect(limited.transaction(async (c) => (await c.query<{ n: number }>('SELECT 1 AS n')).rows[0]?.n)).resolves.toBe(1);
    } finally {
      await limited.close();
    }
  });

  it('answers ping', async () => {
    await expect(db.ping()).resolves.toBeUndefined();
  });
});
