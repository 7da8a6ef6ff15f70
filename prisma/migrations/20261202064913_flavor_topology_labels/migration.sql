-- AlterTable
ALTER TABLE "flavors" ADD COLUMN     "topology_labels" JSONB NOT NULL DEFAULT '{}';
