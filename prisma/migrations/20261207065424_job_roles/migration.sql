-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "roles" JSONB;

-- AlterTable
ALTER TABLE "allocations" ADD COLUMN     "role" TEXT;
