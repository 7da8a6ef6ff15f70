-- Hand-written migration: the schema.prisma copy next to this file is unchanged.

-- Hand-written: jobs already requeued resume as the snapshot assumed until now (their reported fraction);
-- running jobs' earlier requeues are not known (their runs count as from the start).
UPDATE "jobs" SET "resume_fraction" = "completed_fraction"
 WHERE "state" = 'PENDING' AND "checkpoint" IS NOT NULL AND "completed_fraction" IS NOT NULL;

-- Hand-written: resume_fraction is a snapshot column (snapshot-rows.ts), so a change of it is logged
-- (the function of 20261202120322_snapshot_changes_triggers, with resume_fraction in both row lists).
CREATE OR REPLACE FUNCTION qm_snapshot_jobs_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO snapshot_changes (entity, key) SELECT 'job', n.id::text FROM new_rows n;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO snapshot_changes (entity, key) SELECT 'job', o.id::text FROM old_rows o;
  ELSE
    INSERT INTO snapshot_changes (entity, key)
    SELECT 'job', n.id::text FROM new_rows n JOIN old_rows o ON o.id = n.id
     WHERE (n.state, n.version, n.name, n.team, n.kind, n.priority, n.preemptible, n.replicas, n.min_replicas,
            n.accelerators_per_replica, n.cpu_millis_per_replica, n.memory_mib_per_replica, n.flavors,
            n.flavor_selection, n.speeds, n.topology_level, n.tpu_shape, n.expected_runtime_seconds,
            n.submitted_at, n.queued_at, n.checkpoint, n.last_checkpoint_at, n.completed_fraction, n.resume_fraction,
            n.flavor, n.admitted_at, n.updated_at, n.preempted_jobs, n.template -> 'nodeSelector')
           IS DISTINCT FROM
           (o.state, o.version, o.name, o.team, o.kind, o.priority, o.preemptible, o.replicas, o.min_replicas,
            o.accelerators_per_replica, o.cpu_millis_per_replica, o.memory_mib_per_replica, o.flavors,
            o.flavor_selection, o.speeds, o.topology_level, o.tpu_shape, o.expected_runtime_seconds,
            o.submitted_at, o.queued_at, o.checkpoint, o.last_checkpoint_at, o.completed_fraction, o.resume_fraction,
            o.flavor, o.admitted_at, o.updated_at, o.preempted_jobs, o.template -> 'nodeSelector');
  END IF;
  RETURN NULL;
END
$$;
