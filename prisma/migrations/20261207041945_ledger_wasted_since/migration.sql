-- AlterTable
ALTER TABLE "job_transitions" ADD COLUMN     "lost_since" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "usage_segments" ADD COLUMN     "wasted_since" TIMESTAMPTZ(3);
