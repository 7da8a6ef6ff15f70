-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "last_preempted_at" TIMESTAMPTZ(3);
