-- Hand-written migration: schema.prisma is unchanged by it.
--
-- The ledger's wasted work is the work a release throws away, as the scheduler decided it: a preempted or
-- moved job resumes from its last checkpoint, so only the work after that checkpoint is wasted (the
-- scheduler's "loses N accelerator-hours"). The release's transition carries that checkpoint (lost_since);
-- a release without it (a failure, a requeue by hand, a job that does not checkpoint) wastes the whole run.
-- The functions of 20261202040953_usage_ledger_triggers, with wasted_since in both.
CREATE OR REPLACE FUNCTION qm_usage_from_transitions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE usage_segments s
     SET ended_at = GREATEST(t.at, s.started_at), end_state = t."to", closed_by = t.id,
         wasted = t."to" IN ('FAILED', 'PREEMPTED', 'PENDING'),
         wasted_since = CASE WHEN t."to" IN ('FAILED', 'PREEMPTED', 'PENDING')
                             THEN LEAST(GREATEST(COALESCE(t.lost_since, s.started_at), s.started_at), GREATEST(t.at, s.started_at)) END
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

CREATE OR REPLACE FUNCTION qm_rebuild_usage_segments() RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  n integer;
BEGIN
  DELETE FROM usage_segments;
  INSERT INTO usage_segments (job_id, team, flavor, accelerators, started_at, ended_at, end_state, wasted, wasted_since, opened_by, closed_by)
  SELECT o.job_id, j.team,
         COALESCE(e.data->>'flavor', cur.flavor, j.flavor, j.flavors[1]),
         COALESCE((e.data->>'accelerators')::int, cur.accelerators, j.admitted_replicas * j.accelerators_per_replica, 0),
         o.at, CASE WHEN c.id IS NULL THEN NULL ELSE GREATEST(c.at, o.at) END, -- GREATEST skips NULLs: keep open ones open
         c."to", COALESCE(c."to" IN ('FAILED', 'PREEMPTED', 'PENDING'), false),
         CASE WHEN c."to" IN ('FAILED', 'PREEMPTED', 'PENDING')
              THEN LEAST(GREATEST(COALESCE(c.lost_since, o.at), o.at), GREATEST(c.at, o.at)) END,
         o.id, c.id
    FROM job_transitions o
    JOIN jobs j ON j.id = o.job_id
    LEFT JOIN LATERAL (SELECT t.id, t.at, t."to", t.lost_since FROM job_transitions t
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

-- Segments closed before this migration: their releases carried no checkpoint, so the whole run was wasted.
UPDATE usage_segments SET wasted_since = started_at WHERE wasted;
