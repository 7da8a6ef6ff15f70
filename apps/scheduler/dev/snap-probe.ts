import { performance } from 'node:perf_hooks';
import { DEFAULT_OPTIONS, runCycle } from '#core';
import { Database, createTestDatabase, loadSnapshotWithVersions, commitCycle, acquireOrRenewLease } from '#db';
import { seedFleet, submitJobs } from '../../../test/integration/scheduler/fleet.js';

const t = await createTestDatabase({ label: 'probe' });
const db = new Database(t.url, { poolSize: 8 });
await seedFleet(db.pool, { nodes: 700, perNode: 8 });
await submitJobs(db.pool, 5000, { tag: 'p' });
const lease = await acquireOrRenewLease(db, 'scheduler', 'me', 600000);
for (let i = 0; i < 3; i++) {
  let t0 = performance.now();
  const { snapshot, versions } = await loadSnapshotWithVersions(db, Date.now(), DEFAULT_OPTIONS);
  const snapMs = performance.now() - t0;
  t0 = performance.now();
  const result = runCycle(snapshot);
  const schedMs = performance.now() - t0;
  t0 = performance.now();
  await commitCycle(db, { result, now: Date.now(), fencing: { leaseName: 'scheduler', token: lease.fencingToken }, cycleNumber: i + 1, leader: 'me', versions });
  const commitMs = performance.now() - t0;
  console.log(JSON.stringify({ pending: snapshot.pending.length, running: snapshot.running.length, admitted: result.admissions.length, snapMs, schedMs, commitMs }));
}
await db.close();
await t.drop();
