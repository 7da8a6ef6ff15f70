-- CreateIndex
CREATE INDEX "jobs_name_submitted_at_id_idx" ON "jobs"("name", "submitted_at" DESC, "id" DESC);
