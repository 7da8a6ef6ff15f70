import type { Database } from '../database.js';
import type { Prisma } from '../generated/prisma/client.js';

/** What the simulator replays of a job (`qm simulate --from-db`): what it asked for and when it ran. */
const HISTORY_SELECT = {
  id: true,
  team: true,
  priority: true,
  preemptible: true,
  replicas: true,
  acceleratorsPerReplica: true,
  flavors: true,
  speeds: true,
  expectedRuntimeSeconds: true,
  checkpoint: true,
  resumeFraction: true,
  state: true,
  flavor: true,
  submittedAt: true,
  startedAt: true,
  finishedAt: true,
} as const satisfies Prisma.JobSelect;

export type JobHistoryRecord = Prisma.JobGetPayload<{ select: typeof HISTORY_SELECT }>;

/** Jobs submitted at or after `since`, and those submitted before it that had not ended by then; oldest first (ties by id). */
export async function readJobHistory(db: Database, since: Date): Promise<JobHistoryRecord[]> {
  return db.prisma.job.findMany({
    where: { OR: [{ submittedAt: { gte: since } }, { finishedAt: null }, { finishedAt: { gt: since } }] },
    orderBy: [{ submittedAt: 'asc' }, { id: 'asc' }],
    select: HISTORY_SELECT,
  });
}
