-- AlterTable
ALTER TABLE "teams" ADD COLUMN     "max_pending_jobs" INTEGER,
ADD COLUMN     "submissions_per_second" INTEGER;

-- AlterTable
ALTER TABLE "api_tokens" ADD COLUMN     "expires_at" TIMESTAMPTZ(3),
ADD COLUMN     "last_used_at" TIMESTAMPTZ(3);
