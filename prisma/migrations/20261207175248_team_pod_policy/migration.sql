-- AlterTable
ALTER TABLE "teams" ADD COLUMN     "pod_policy" JSONB;
