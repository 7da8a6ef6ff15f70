-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "created_by_token" UUID;
