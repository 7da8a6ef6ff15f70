import { describe, expect, it, jest } from '@jest/globals';
import { JobRepository, QueueRepository } from '#db';
import { ID, T0, seededDatabase } from './seed.js';

jest.setTimeout(60_000);

/** JobRepository's and QueueRepository's reads through the Prisma client, on the seeded fleet. */
const database = seededDatabase('job_reads');

describe('job reads', () => {
  it('get: the record in the API spelling, its allocation in replica order and its transitions', async () => {
    const job = await new JobRepository(database()).get(ID.runB);
    expect(job).toMatchObject({ id: ID.runB, kind: 'batch-inference', state: 'ADMITTED', flavor: 'h100-80gb', speeds: null, checkpoint: null });
    expect(job!.allocation.map((a) => a.replica)).toEqual([...job!.allocation.map((a) => a.replica)].sort((a, b) => a - b));
    expect(await new JobRepository(database()).get('not-a-uuid')).toBeNull();
  });

  it('list: keyset pages over (submittedAt, id) descending lose and repeat nothing, also among equal submission times', async () => {
    const same = new Date(T0 + 60_000);
    await database().prisma.job.createMany({
      data: Array.from({ length: 5 }, (_, i) => ({
        name: `tie-${i}`,
        team: 'solo',
        kind: 'training' as const,
        replicas: 1,
        minReplicas: 1,
        acceleratorsPerReplica: 1,
        flavors: ['tpu-v5e'],
        template: {},
        createdBy: 'test',
        submittedAt: same,
        queuedAt: same,
      })),
    });
    const jobs = new JobRepository(database());
    const all = await jobs.list({ team: 'solo', limit: 100 });
    const seen: string[] = [];
    let before: { submittedAt: Date; id: string } | undefined;
    for (;;) {
      const page = await jobs.list({ team: 'solo', limit: 2, ...(before ? { before } : {}) });
      seen.push(...page.map((j) => j.id));
      if (page.length < 2) break;
      const last = page.at(-1)!;
      before = { submittedAt: last.submittedAt, id: last.id };
    }
    expect(all).toHaveLength(6);
    expect(seen).toEqual(all.map((j) => j.id));
    // Summaries: the template is not read (ADR 0025), only the workload it names, null for these.
    expect(all.filter((j) => 'template' in j || j.workload !== null)).toEqual([]);
    const ties = all.filter((j) => j.submittedAt.getTime() === same.getTime()).map((j) => j.id);
    expect(ties).toEqual([...ties].sort().reverse());
  });

  it('queue: pending in the last cycle’s order, jobs no cycle has seen last, by flavor accepted', async () => {
    await database().prisma.job.update({ where: { id: ID.pend3 }, data: { pendingPosition: 1 } });
    const page = await new QueueRepository(database()).list({ states: ['PENDING'], flavor: 'h100-80gb', limit: 10, offset: 0 });
    expect(page.items.map((j) => j.id)).toEqual([ID.pend3, ID.pend1]);
    expect(page.items.filter((j) => 'template' in j)).toEqual([]);
    expect(page.total).toBe(2);
    const held = await new QueueRepository(database()).list({ states: ['ADMITTED', 'RUNNING'], limit: 1, offset: 1 });
    expect(held.items.map((j) => j.id)).toEqual([ID.runB]);
    expect(held.total).toBe(2);
  });
});
