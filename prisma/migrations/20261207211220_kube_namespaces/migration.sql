-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "namespace" TEXT;

-- CreateTable
CREATE TABLE "kube_cluster" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "own_namespace" TEXT,
    "create_namespaces" BOOLEAN NOT NULL DEFAULT false,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "kube_cluster_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "kube_namespaces" (
    "name" TEXT NOT NULL,
    "pod_security" TEXT,

    CONSTRAINT "kube_namespaces_pkey" PRIMARY KEY ("name")
);
