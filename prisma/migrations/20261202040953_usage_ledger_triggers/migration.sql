-- Hand-written migration: the schema.prisma copy next to this file is unchanged.
--
-- The usage ledger (usage_segments) and the price history (flavor_prices) are derived in Postgres, in the
-- transaction of the change they record, so that every writer — the scheduler's commit, status reports,
-- cancellation, Kubernetes phase sync, requeues, whichever process and path — is covered without calling
-- anything: Prisma does not model triggers, so they live here. See libs/db/README.md, "Usage ledger".

-- A job holds accelerators from its admission (→ ADMITTED, once its allocations are written) until a
-- transition out of ADMITTED/BINDING/RUNNING. The release closes the open segment; a release to FAILED,
-- PREEMPTED or PENDING (requeue) marks it wasted. One statement-level trigger: a cycle that admits
-- thousands of jobs costs two set-based statements, not one per row.
CREATE FUNCTION qm_usage_from_transitions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE usage_segments s
     SET ended_at = GREATEST(t.at, s.started_at), end_state = t."to", closed_by = t.id,
         wasted = t."to" IN ('FAILED', 'PREEMPTED', 'PENDING')
    FROM new_transitions t
   WHERE s.job_id = t.job_id AND s.ended_at IS NULL
     AND t."from" IN ('ADMITTED', 'BINDING', 'RUNNING') AND t."to" NOT IN ('ADMITTED', 'BINDING', 'RUNNING');

  INSERT INTO usage_segments (job_id, team, flavor, accelerators, started_at, opened_by)
  SELECT t.job_id, j.team, COALESCE(a.flavor, j.flavor, j.flavors[1]),
         COALESCE(a.accelerators, j.admitted_replicas * j.accelerators_per_replica, 0), t.at, t.id
    FROM new_transitions t
    JOIN jobs j ON j.id = t.job_id
    LEFT JOIN LATERAL (SELECT min(al.flavor) AS flavor, sum(al.accelerators)::int AS accelerators
                         FROM allocations al WHERE al.job_id = t.job_id) a ON true
   WHERE t."to" = 'ADMITTED'
  ON CONFLICT (opened_by) DO NOTHING;
  RETURN NULL;
END
$$;

CREATE TRIGGER job_transitions_usage AFTER INSERT ON job_transitions
  REFERENCING NEW TABLE AS new_transitions FOR EACH STATEMENT EXECUTE FUNCTION qm_usage_from_transitions();

-- The ledger again from the whole history of job_transitions (used once below for the jobs that ran before
-- this migration, and by rebuildUsageLedger in libs/db, which tests compare with the trigger's ledger).
-- Accelerators and flavor of an admission come from its `job.admitted` event (written in the same
-- commit), else from the job's current allocations while it still holds, else from the job row.
CREATE FUNCTION qm_rebuild_usage_segments() RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  n integer;
BEGIN
  DELETE FROM usage_segments;
  INSERT INTO usage_segments (job_id, team, flavor, accelerators, started_at, ended_at, end_state, wasted, opened_by, closed_by)
  SELECT o.job_id, j.team,
         COALESCE(e.data->>'flavor', cur.flavor, j.flavor, j.flavors[1]),
         COALESCE((e.data->>'accelerators')::int, cur.accelerators, j.admitted_replicas * j.accelerators_per_replica, 0),
         o.at, CASE WHEN c.id IS NULL THEN NULL ELSE GREATEST(c.at, o.at) END, -- GREATEST skips NULLs: keep open ones open
         c."to", COALESCE(c."to" IN ('FAILED', 'PREEMPTED', 'PENDING'), false), o.id, c.id
    FROM job_transitions o
    JOIN jobs j ON j.id = o.job_id
    LEFT JOIN LATERAL (SELECT t.id, t.at, t."to" FROM job_transitions t
                        WHERE t.job_id = o.job_id AND t.id > o.id
                          AND t."from" IN ('ADMITTED', 'BINDING', 'RUNNING') AND t."to" NOT IN ('ADMITTED', 'BINDING', 'RUNNING')
                        ORDER BY t.id LIMIT 1) c ON true
    LEFT JOIN LATERAL (SELECT ev.data FROM events ev
                        WHERE ev.job_id = o.job_id AND ev.kind = 'job.admitted' AND ev.at = o.at
                        ORDER BY ev.id LIMIT 1) e ON true
    LEFT JOIN LATERAL (SELECT min(al.flavor) AS flavor, sum(al.accelerators)::int AS accelerators
                         FROM allocations al WHERE al.job_id = o.job_id) cur ON c.id IS NULL
   WHERE o."to" = 'ADMITTED';
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n;
END
$$;

SELECT qm_rebuild_usage_segments();

-- Price history: a row for every new flavor and every change of its cost_per_hour, at the time of the change.
CREATE FUNCTION qm_flavor_price_history() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' OR NEW.cost_per_hour IS DISTINCT FROM OLD.cost_per_hour THEN
    INSERT INTO flavor_prices (flavor, cost_per_hour, effective_from) VALUES (NEW.name, NEW.cost_per_hour, now());
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER flavors_price_history AFTER INSERT OR UPDATE OF cost_per_hour ON flavors
  FOR EACH ROW EXECUTE FUNCTION qm_flavor_price_history();

INSERT INTO flavor_prices (flavor, cost_per_hour, effective_from) SELECT name, cost_per_hour, created_at FROM flavors;
