-- CreateEnum
CREATE TYPE "budget_period" AS ENUM ('day', 'week', 'month');

-- CreateEnum
CREATE TYPE "budget_unit" AS ENUM ('accelerator-hours', 'currency');

-- CreateEnum
CREATE TYPE "budget_action" AS ENUM ('warn', 'block');

-- AlterEnum
ALTER TYPE "pending_code" ADD VALUE 'BUDGET_EXHAUSTED';

-- CreateTable
CREATE TABLE "usage_segments" (
    "id" BIGSERIAL NOT NULL,
    "job_id" UUID NOT NULL,
    "team" TEXT NOT NULL,
    "flavor" TEXT NOT NULL,
    "accelerators" INTEGER NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "ended_at" TIMESTAMPTZ(3),
    "end_state" "job_state",
    "wasted" BOOLEAN NOT NULL DEFAULT false,
    "opened_by" BIGINT NOT NULL,
    "closed_by" BIGINT,

    CONSTRAINT "usage_segments_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "flavor_prices" (
    "id" BIGSERIAL NOT NULL,
    "flavor" TEXT NOT NULL,
    "cost_per_hour" DOUBLE PRECISION NOT NULL,
    "effective_from" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "flavor_prices_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "budgets" (
    "team" TEXT NOT NULL,
    "period" "budget_period" NOT NULL,
    "limit_amount" DOUBLE PRECISION NOT NULL,
    "unit" "budget_unit" NOT NULL,
    "on_exhausted" "budget_action" NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "budgets_pkey" PRIMARY KEY ("team","period")
);

-- CreateTable
CREATE TABLE "budget_alerts" (
    "team" TEXT NOT NULL,
    "period" "budget_period" NOT NULL,
    "period_start" TIMESTAMPTZ(3) NOT NULL,
    "threshold" INTEGER NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "event_id" BIGINT,

    CONSTRAINT "budget_alerts_pkey" PRIMARY KEY ("team","period","period_start","threshold")
);

-- CreateIndex
CREATE UNIQUE INDEX "usage_segments_opened_by_key" ON "usage_segments"("opened_by");

-- CreateIndex
CREATE INDEX "usage_segments_job_id_ended_at_idx" ON "usage_segments"("job_id", "ended_at");

-- CreateIndex
CREATE INDEX "usage_segments_ended_at_idx" ON "usage_segments"("ended_at");

-- CreateIndex
CREATE INDEX "usage_segments_team_ended_at_idx" ON "usage_segments"("team", "ended_at");

-- CreateIndex
CREATE INDEX "flavor_prices_flavor_effective_from_idx" ON "flavor_prices"("flavor", "effective_from");

-- AddForeignKey
ALTER TABLE "budgets" ADD CONSTRAINT "budgets_team_fkey" FOREIGN KEY ("team") REFERENCES "teams"("name") ON DELETE CASCADE ON UPDATE CASCADE;
