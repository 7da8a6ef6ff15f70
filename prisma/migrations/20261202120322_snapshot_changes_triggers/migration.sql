-- Hand-written migration: the schema.prisma copy next to this file is unchanged.
-- Hand-written (Prisma does not model triggers): the writers of what the scheduler's snapshot reads
-- log what they changed, in their own transaction, whoever they are (cycle commit, API, reconcile,
-- Kubernetes sync, a test). Statement-level triggers with transition tables: a cycle that moves 10,000
-- jobs writes one set-based INSERT here, not 10,000 trigger calls. See ADR 0019.

-- Jobs: a new, deleted, or updated job whose snapshot columns changed (the cycle's own rewrite of pending
-- reasons, positions and reservations is not a change of the snapshot and logs nothing).
CREATE FUNCTION qm_snapshot_jobs_changed() RETURNS trigger LANGUAGE plpgsql AS $$
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
            n.submitted_at, n.queued_at, n.checkpoint, n.last_checkpoint_at, n.completed_fraction, n.flavor,
            n.admitted_at, n.updated_at, n.preempted_jobs, n.template -> 'nodeSelector')
           IS DISTINCT FROM
           (o.state, o.version, o.name, o.team, o.kind, o.priority, o.preemptible, o.replicas, o.min_replicas,
            o.accelerators_per_replica, o.cpu_millis_per_replica, o.memory_mib_per_replica, o.flavors,
            o.flavor_selection, o.speeds, o.topology_level, o.tpu_shape, o.expected_runtime_seconds,
            o.submitted_at, o.queued_at, o.checkpoint, o.last_checkpoint_at, o.completed_fraction, o.flavor,
            o.admitted_at, o.updated_at, o.preempted_jobs, o.template -> 'nodeSelector');
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER jobs_snapshot_insert AFTER INSERT ON jobs
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION qm_snapshot_jobs_changed();
CREATE TRIGGER jobs_snapshot_update AFTER UPDATE ON jobs
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION qm_snapshot_jobs_changed();
CREATE TRIGGER jobs_snapshot_delete AFTER DELETE ON jobs
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION qm_snapshot_jobs_changed();

-- Allocations are a running job's placement. They are inserted and deleted only with a move of their job
-- (the transition writer: the job's row changes in the same statement, and is logged above), or when
-- their job has ended or is pending (reconcile, the commit's clean-up: not in the snapshot), so only an
-- UPDATE of allocations (none today) logs their job: a cycle that admits 10,000 jobs logs 10,000 rows,
-- not 20,000. A writer that broke this would show in the checked reads (qm_scheduler_snapshot_mismatches_total).
CREATE FUNCTION qm_snapshot_allocations_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO snapshot_changes (entity, key)
  SELECT DISTINCT 'job', x.job_id::text FROM (SELECT job_id FROM new_rows UNION ALL SELECT job_id FROM old_rows) x;
  RETURN NULL;
END
$$;

CREATE TRIGGER allocations_snapshot_update AFTER UPDATE ON allocations
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION qm_snapshot_allocations_changed();

-- Nodes: by name.
CREATE FUNCTION qm_snapshot_nodes_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO snapshot_changes (entity, key) SELECT 'node', n.name FROM new_rows n;
  END IF;
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    INSERT INTO snapshot_changes (entity, key) SELECT 'node', o.name FROM old_rows o;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER nodes_snapshot_insert AFTER INSERT ON nodes
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION qm_snapshot_nodes_changed();
CREATE TRIGGER nodes_snapshot_update AFTER UPDATE ON nodes
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION qm_snapshot_nodes_changed();
CREATE TRIGGER nodes_snapshot_delete AFTER DELETE ON nodes
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION qm_snapshot_nodes_changed();

-- Flavors, cohorts, teams and quotas are small: any change re-reads the whole table (`TG_ARGV[0]` names it).
CREATE FUNCTION qm_snapshot_table_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO snapshot_changes (entity, key) VALUES (TG_ARGV[0], '');
  RETURN NULL;
END
$$;

CREATE TRIGGER flavors_snapshot AFTER INSERT OR UPDATE OR DELETE ON flavors
  FOR EACH STATEMENT EXECUTE FUNCTION qm_snapshot_table_changed('flavor');
CREATE TRIGGER cohorts_snapshot AFTER INSERT OR UPDATE OR DELETE ON cohorts
  FOR EACH STATEMENT EXECUTE FUNCTION qm_snapshot_table_changed('cohort');
CREATE TRIGGER teams_snapshot AFTER INSERT OR UPDATE OR DELETE ON teams
  FOR EACH STATEMENT EXECUTE FUNCTION qm_snapshot_table_changed('team');
CREATE TRIGGER quotas_snapshot AFTER INSERT OR UPDATE OR DELETE ON quotas
  FOR EACH STATEMENT EXECUTE FUNCTION qm_snapshot_table_changed('quota');
