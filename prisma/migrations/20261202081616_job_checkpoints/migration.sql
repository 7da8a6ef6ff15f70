-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "checkpoint" JSONB,
ADD COLUMN     "completed_fraction" DOUBLE PRECISION,
ADD COLUMN     "last_checkpoint_at" TIMESTAMPTZ(3);
