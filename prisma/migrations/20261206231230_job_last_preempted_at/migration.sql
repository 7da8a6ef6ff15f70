-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "last_preempted_at" TIMESTAMPTZ(3);

-- last_preempted_at is a snapshot column (snapshot-rows.ts) but needs no trigger change: only the transition
-- writer sets it, in the same UPDATE that bumps version, which qm_snapshot_jobs_changed() already logs.
