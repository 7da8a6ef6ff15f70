-- AlterTable
ALTER TABLE "teams" ADD COLUMN     "namespaces" TEXT[] DEFAULT ARRAY[]::TEXT[];
