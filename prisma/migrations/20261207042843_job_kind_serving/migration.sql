-- AlterEnum
ALTER TYPE "job_kind" ADD VALUE 'serving';
