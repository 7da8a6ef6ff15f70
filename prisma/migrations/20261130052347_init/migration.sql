-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateEnum
CREATE TYPE "flavor_kind" AS ENUM ('nvidia-gpu', 'aws-trainium', 'intel-gaudi', 'google-tpu');

-- CreateEnum
CREATE TYPE "within_team_policy" AS ENUM ('Never', 'LowerPriority', 'LowerOrNewerEqualPriority');

-- CreateEnum
CREATE TYPE "reclaim_policy" AS ENUM ('Never', 'LowerPriority', 'Any');

-- CreateEnum
CREATE TYPE "node_source" AS ENUM ('api', 'kubernetes');

-- CreateEnum
CREATE TYPE "job_kind" AS ENUM ('training', 'eval', 'batch-inference');

-- CreateEnum
CREATE TYPE "job_state" AS ENUM ('PENDING', 'ADMITTED', 'BINDING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'PREEMPTED');

-- CreateEnum
CREATE TYPE "flavor_selection" AS ENUM ('preference', 'fastest');

-- CreateEnum
CREATE TYPE "topology_level" AS ENUM ('none', 'zone', 'block', 'domain');

-- CreateEnum
CREATE TYPE "pending_code" AS ENUM ('QUOTA_EXCEEDED', 'COHORT_EXHAUSTED', 'NO_QUOTA', 'INSUFFICIENT_CAPACITY', 'TOPOLOGY_UNSATISFIABLE', 'BLOCKED_BY_RESERVATION', 'ADMISSION_LIMIT', 'UNSATISFIABLE', 'INVALID');

-- CreateEnum
CREATE TYPE "role" AS ENUM ('admin', 'member');

-- CreateEnum
CREATE TYPE "outbox_status" AS ENUM ('pending', 'done', 'failed');

-- CreateTable
CREATE TABLE "flavors" (
    "name" TEXT NOT NULL,
    "kind" "flavor_kind" NOT NULL,
    "resource_name" TEXT NOT NULL,
    "node_labels" JSONB NOT NULL DEFAULT '{}',
    "memory_gib" INTEGER,
    "relative_speed" DOUBLE PRECISION NOT NULL DEFAULT 1,
    "cost_per_hour" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "flavors_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "cohorts" (
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "cohorts_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "teams" (
    "name" TEXT NOT NULL,
    "cohort" TEXT,
    "fair_share_weight" INTEGER NOT NULL DEFAULT 1,
    "within_team" "within_team_policy" NOT NULL DEFAULT 'LowerPriority',
    "reclaim_within_cohort" "reclaim_policy" NOT NULL DEFAULT 'Any',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "teams_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "quotas" (
    "team" TEXT NOT NULL,
    "flavor" TEXT NOT NULL,
    "nominal" INTEGER NOT NULL,
    "borrowing_limit" INTEGER,
    "lending_limit" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "quotas_pkey" PRIMARY KEY ("team","flavor")
);

-- CreateTable
CREATE TABLE "nodes" (
    "name" TEXT NOT NULL,
    "flavor" TEXT NOT NULL,
    "accelerators" INTEGER NOT NULL,
    "cpu_millis" INTEGER NOT NULL,
    "memory_mib" INTEGER NOT NULL,
    "zone" TEXT,
    "block" TEXT,
    "domain" TEXT,
    "tpu_shape" TEXT,
    "schedulable" BOOLEAN NOT NULL DEFAULT true,
    "source" "node_source" NOT NULL DEFAULT 'api',
    "external_accelerators" INTEGER NOT NULL DEFAULT 0,
    "external_cpu_millis" INTEGER NOT NULL DEFAULT 0,
    "external_memory_mib" INTEGER NOT NULL DEFAULT 0,
    "labels" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "nodes_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "jobs" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "name" TEXT NOT NULL,
    "team" TEXT NOT NULL,
    "kind" "job_kind" NOT NULL,
    "priority" INTEGER NOT NULL DEFAULT 0,
    "preemptible" BOOLEAN NOT NULL DEFAULT true,
    "replicas" INTEGER NOT NULL,
    "min_replicas" INTEGER NOT NULL,
    "accelerators_per_replica" INTEGER NOT NULL,
    "cpu_millis_per_replica" INTEGER NOT NULL DEFAULT 0,
    "memory_mib_per_replica" INTEGER NOT NULL DEFAULT 0,
    "flavors" TEXT[],
    "flavor_selection" "flavor_selection" NOT NULL DEFAULT 'preference',
    "speeds" JSONB,
    "topology_level" "topology_level" NOT NULL DEFAULT 'none',
    "tpu_shape" TEXT,
    "expected_runtime_seconds" INTEGER,
    "template" JSONB NOT NULL,
    "state" "job_state" NOT NULL DEFAULT 'PENDING',
    "flavor" TEXT,
    "admitted_replicas" INTEGER,
    "pending_code" "pending_code",
    "pending_message" TEXT,
    "pending_position" INTEGER,
    "pending_estimated_start_at" TIMESTAMPTZ(3),
    "reservation" JSONB,
    "preempted_by" UUID,
    "preemption_count" INTEGER NOT NULL DEFAULT 0,
    "submitted_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "queued_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "admitted_at" TIMESTAMPTZ(3),
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),
    "created_by" TEXT NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 0,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "jobs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "allocations" (
    "job_id" UUID NOT NULL,
    "replica" INTEGER NOT NULL,
    "node" TEXT NOT NULL,
    "flavor" TEXT NOT NULL,
    "accelerators" INTEGER NOT NULL,
    "cpu_millis" INTEGER NOT NULL,
    "memory_mib" INTEGER NOT NULL,

    CONSTRAINT "allocations_pkey" PRIMARY KEY ("job_id","replica")
);

-- CreateTable
CREATE TABLE "job_transitions" (
    "id" BIGSERIAL NOT NULL,
    "job_id" UUID NOT NULL,
    "from" "job_state",
    "to" "job_state" NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "reason" TEXT NOT NULL DEFAULT '',

    CONSTRAINT "job_transitions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "events" (
    "id" BIGSERIAL NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "kind" TEXT NOT NULL,
    "job_id" UUID,
    "team" TEXT,
    "actor" TEXT NOT NULL,
    "message" TEXT NOT NULL,
    "data" JSONB NOT NULL DEFAULT '{}',

    CONSTRAINT "events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_tokens" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "subject" TEXT NOT NULL,
    "role" "role" NOT NULL,
    "teams" TEXT[],
    "token_hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "api_tokens_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "idempotency_keys" (
    "key" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "job_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("subject","key")
);

-- CreateTable
CREATE TABLE "scheduler_leases" (
    "name" TEXT NOT NULL,
    "holder" TEXT NOT NULL,
    "fencing_token" BIGINT NOT NULL,
    "acquired_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "renewed_at" TIMESTAMPTZ(3) NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "scheduler_leases_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "outbox" (
    "id" BIGSERIAL NOT NULL,
    "kind" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "status" "outbox_status" NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    "available_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "done_at" TIMESTAMPTZ(3),
    "dedupe_key" TEXT NOT NULL,

    CONSTRAINT "outbox_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "scheduler_cycles" (
    "id" BIGSERIAL NOT NULL,
    "number" BIGINT NOT NULL,
    "leader" TEXT NOT NULL,
    "fencing_token" BIGINT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "duration_ms" INTEGER NOT NULL,
    "considered" INTEGER NOT NULL DEFAULT 0,
    "admitted" INTEGER NOT NULL,
    "preempted" INTEGER NOT NULL,
    "reserved" INTEGER NOT NULL DEFAULT 0,
    "pending" INTEGER NOT NULL,

    CONSTRAINT "scheduler_cycles_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "teams_cohort_idx" ON "teams"("cohort");

-- CreateIndex
CREATE INDEX "quotas_flavor_idx" ON "quotas"("flavor");

-- CreateIndex
CREATE INDEX "nodes_flavor_idx" ON "nodes"("flavor");

-- CreateIndex
CREATE INDEX "jobs_state_submitted_at_id_idx" ON "jobs"("state", "submitted_at", "id");

-- CreateIndex
CREATE INDEX "jobs_team_state_submitted_at_idx" ON "jobs"("team", "state", "submitted_at");

-- CreateIndex
CREATE INDEX "jobs_submitted_at_id_idx" ON "jobs"("submitted_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "jobs_team_submitted_at_id_idx" ON "jobs"("team", "submitted_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "allocations_node_idx" ON "allocations"("node");

-- CreateIndex
CREATE INDEX "job_transitions_job_id_id_idx" ON "job_transitions"("job_id", "id");

-- CreateIndex
CREATE INDEX "events_job_id_id_idx" ON "events"("job_id", "id");

-- CreateIndex
CREATE INDEX "events_team_id_idx" ON "events"("team", "id");

-- CreateIndex
CREATE INDEX "events_kind_id_idx" ON "events"("kind", "id");

-- CreateIndex
CREATE UNIQUE INDEX "api_tokens_token_hash_key" ON "api_tokens"("token_hash");

-- CreateIndex
CREATE INDEX "idempotency_keys_job_id_idx" ON "idempotency_keys"("job_id");

-- CreateIndex
CREATE INDEX "idempotency_keys_created_at_idx" ON "idempotency_keys"("created_at");

-- CreateIndex
CREATE UNIQUE INDEX "outbox_dedupe_key_key" ON "outbox"("dedupe_key");

-- CreateIndex
CREATE INDEX "outbox_status_available_at_id_idx" ON "outbox"("status", "available_at", "id");

-- CreateIndex
CREATE INDEX "scheduler_cycles_started_at_idx" ON "scheduler_cycles"("started_at");

-- AddForeignKey
ALTER TABLE "teams" ADD CONSTRAINT "teams_cohort_fkey" FOREIGN KEY ("cohort") REFERENCES "cohorts"("name") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "quotas" ADD CONSTRAINT "quotas_team_fkey" FOREIGN KEY ("team") REFERENCES "teams"("name") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "quotas" ADD CONSTRAINT "quotas_flavor_fkey" FOREIGN KEY ("flavor") REFERENCES "flavors"("name") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "nodes" ADD CONSTRAINT "nodes_flavor_fkey" FOREIGN KEY ("flavor") REFERENCES "flavors"("name") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_team_fkey" FOREIGN KEY ("team") REFERENCES "teams"("name") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "allocations" ADD CONSTRAINT "allocations_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "allocations" ADD CONSTRAINT "allocations_node_fkey" FOREIGN KEY ("node") REFERENCES "nodes"("name") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "job_transitions" ADD CONSTRAINT "job_transitions_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;
