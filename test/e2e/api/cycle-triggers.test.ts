import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createLogger } from '#common';
import { CycleTriggerSubscriber } from '#scheduling';
import { seedTenancy, startHarness, type Harness } from './harness.js';

// The API alone (npm run start:api) must wake the scheduler after each committed write that may let a
// job start: the trigger goes over Redis pub/sub on the scheduler's prefix.
describe('cycle triggers published by the API', () => {
  let h: Harness;
  let subscriber: CycleTriggerSubscriber;
  const heard: string[] = [];

  beforeAll(async () => {
    h = await startHarness('triggers');
    subscriber = new CycleTriggerSubscriber(h.redisUrl, h.redisPrefix, (reason) => heard.push(reason), createLogger('silent', 'test'));
    await subscriber.start();
  });
  afterAll(async () => {
    await subscriber.close();
    await h.close();
  });

  const heardEventually = async (reason: string): Promise<void> => {
    for (let i = 0; i < 100 && !heard.includes(reason); i++) await new Promise((r) => setTimeout(r, 50));
    expect(heard).toContain(reason);
  };

  it('announces tenancy changes and job submissions, and nothing for rejected or read-only requests', async () => {
    await seedTenancy(h);
    await heardEventually('quota.changed');
    await heardEventually('node.changed');

    heard.length = 0;
    const bad = await h.request('POST', '/v1/jobs', { body: { name: 'Not A Label', team: 'vision' } });
    expect(bad.status).toBe(400);
    expect((await h.request('GET', '/v1/jobs')).status).toBe(200);
    const ok = await h.request('POST', '/v1/jobs', {
      body: { name: 'j1', team: 'vision', replicas: 1, acceleratorsPerReplica: 1, flavors: ['h100-80gb'], template: { image: 'x' } },
    });
    expect(ok.status).toBe(201);
    await heardEventually('job.submitted');
    // pub/sub is ordered per connection: the rejected POST and the GET published no job trigger before it
    // (late tenancy triggers of the seeding may still arrive; they are not about jobs)
    expect(heard.filter((r) => r.startsWith('job.'))).toEqual(['job.submitted']);
  });
});
