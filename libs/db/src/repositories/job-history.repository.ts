import type { Database } from '../database.js';

/** A job as the simulator replays history (`qm simulate --from-db`): what it asked for and when it ran. */
export interface JobHistoryRecord {
  id: string;
  team: string;
  priority: number;
  preemptible: boolean;
  replicas: number;
  acceleratorsPerReplica: number;
  flavors: string[];
  speeds: unknown;
  expectedRuntimeSeconds: number | null;
  /** The job's checkpoint policy (JSON; null = it does not checkpoint). */
  checkpoint: unknown;
  /** Fraction of its work done at the checkpoint its current (or next) run resumes from; null = from the start. */
  resumeFraction: number | null;
  state: string;
  flavor: string | null;
  submittedAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

/** Jobs submitted at or after `since`, and those submitted before it that had not ended by then; oldest first (ties by id). */
export async function readJobHistory(db: Database, since: Date): Promise<JobHistoryRecord[]> {
  return db.prisma.job.findMany({
    where: { OR: [{ submittedAt: { gte: since } }, { finishedAt: null }, { finishedAt: { gt: since } }] },
    orderBy: [{ submittedAt: 'asc' }, { id: 'asc' }],
    select: {
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
    },
  });
}
