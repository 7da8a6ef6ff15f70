-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "resume_fraction" DOUBLE PRECISION;
