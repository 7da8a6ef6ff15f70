-- AlterTable
ALTER TABLE "quotas" ADD COLUMN     "cpu_millis_limit" INTEGER,
ADD COLUMN     "memory_mib_limit" INTEGER;
