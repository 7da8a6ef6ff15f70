-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "preempted_jobs" UUID[] DEFAULT ARRAY[]::UUID[];
