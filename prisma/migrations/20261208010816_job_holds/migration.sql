-- AlterEnum
ALTER TYPE "pending_code" ADD VALUE 'HELD';

-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "held_at" TIMESTAMPTZ(3),
ADD COLUMN     "held_by" TEXT,
ADD COLUMN     "held_by_admin" BOOLEAN NOT NULL DEFAULT false;
