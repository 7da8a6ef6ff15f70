-- CreateEnum
CREATE TYPE "history_resolution" AS ENUM ('minute', 'hour', 'day');

-- CreateTable
CREATE TABLE "fleet_history" (
    "resolution" "history_resolution" NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "flavor" TEXT NOT NULL,
    "team" TEXT NOT NULL,
    "capacity" DOUBLE PRECISION NOT NULL,
    "allocated" DOUBLE PRECISION NOT NULL,
    "pending_jobs" DOUBLE PRECISION NOT NULL,
    "pending_accelerators" DOUBLE PRECISION NOT NULL,
    "wait_p50_seconds" DOUBLE PRECISION,
    "wait_p90_seconds" DOUBLE PRECISION,
    "wait_max_seconds" DOUBLE PRECISION,
    "samples" INTEGER NOT NULL,

    CONSTRAINT "fleet_history_pkey" PRIMARY KEY ("resolution","flavor","team","at")
);

-- CreateIndex
CREATE INDEX "fleet_history_resolution_at_idx" ON "fleet_history"("resolution", "at");
