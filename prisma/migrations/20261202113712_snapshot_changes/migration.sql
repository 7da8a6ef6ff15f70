-- CreateTable
CREATE TABLE "snapshot_changes" (
    "id" BIGSERIAL NOT NULL,
    "xid" xid8 NOT NULL DEFAULT pg_current_xact_id(),
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT clock_timestamp(),
    "entity" TEXT NOT NULL,
    "key" TEXT NOT NULL,

    CONSTRAINT "snapshot_changes_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "snapshot_changes_xid_idx" ON "snapshot_changes"("xid");

-- CreateIndex
CREATE INDEX "snapshot_changes_at_idx" ON "snapshot_changes"("at");
