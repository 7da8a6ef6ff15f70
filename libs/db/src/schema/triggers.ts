/**
 * What the database does that schema.prisma cannot say: its triggers and the functions behind them. They are
 * created by the hand-written migrations named here (an applied migration is never edited: a change is a new
 * migration, and a new line here), and test/integration/db/triggers.test.ts checks this list against the
 * catalog of a migrated database, definition by definition. Anything that writes these tables relies on
 * them: the incremental snapshot (ADR 0019), the usage ledger and the price history (libs/db/README.md).
 */
export interface DeclaredFunction {
  name: string;
  /** The migrations that define it, oldest first (a later one replaces it). */
  migrations: readonly string[];
  purpose: string;
}

export interface DeclaredTrigger {
  name: string;
  table: string;
  /** As `pg_get_triggerdef` prints it. */
  definition: string;
  migration: string;
}

const SNAPSHOT = '20261202120322_snapshot_changes_triggers';
const LEDGER = '20261202040953_usage_ledger_triggers';
const LEDGER_WASTED_SINCE = '20261207042000_ledger_wasted_since_triggers';

export const FUNCTIONS: readonly DeclaredFunction[] = [
  {
    name: 'qm_flavor_price_history',
    migrations: [LEDGER],
    purpose: "Price history: a flavor's price as it is set or changed is appended to flavor_prices (cost in the ledger is priced at the time of use).",
  },
  {
    name: 'qm_rebuild_usage_segments',
    migrations: [LEDGER, LEDGER_WASTED_SINCE],
    purpose: 'Rebuilds usage_segments from job_transitions (a repair, not a trigger); returns the segments written.',
  },
  {
    name: 'qm_snapshot_allocations_changed',
    migrations: [SNAPSHOT],
    purpose: "Snapshot change log: an allocation whose node changed (a move) logs its job, so the scheduler's cached snapshot reads it again.",
  },
  {
    name: 'qm_snapshot_jobs_changed',
    migrations: [SNAPSHOT, '20261202202846_job_resume_fraction_triggers'],
    purpose: 'Snapshot change log: a job inserted, deleted or changed in what the core reads (state, shape, progress, resume fraction…) is logged.',
  },
  {
    name: 'qm_snapshot_nodes_changed',
    migrations: [SNAPSHOT],
    purpose: 'Snapshot change log: a node added, removed or changed is logged.',
  },
  {
    name: 'qm_snapshot_table_changed',
    migrations: [SNAPSHOT],
    purpose: 'Snapshot change log: any change to the tenancy (flavors, cohorts, teams, quotas) logs its table: the snapshot reads the tenancy again.',
  },
  {
    name: 'qm_usage_from_transitions',
    migrations: [LEDGER, LEDGER_WASTED_SINCE],
    purpose:
      'Usage ledger: a transition that admits a job opens its usage segment, one that releases it closes the segment (wasted when preempted or ' +
      'failed: from the checkpoint the release names in lost_since, else from the start).',
  },
];

const statementTrigger = (name: string, table: string, events: string, fn: string, referencing = ''): DeclaredTrigger => ({
  name,
  table,
  definition: `CREATE TRIGGER ${name} AFTER ${events} ON public.${table} ${referencing}FOR EACH STATEMENT EXECUTE FUNCTION ${fn}`,
  migration: SNAPSHOT,
});

export const TRIGGERS: readonly DeclaredTrigger[] = [
  statementTrigger('allocations_snapshot_update', 'allocations', 'UPDATE', 'qm_snapshot_allocations_changed()', 'REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows '),
  statementTrigger('cohorts_snapshot', 'cohorts', 'INSERT OR DELETE OR UPDATE', "qm_snapshot_table_changed('cohort')"),
  {
    name: 'flavors_price_history',
    table: 'flavors',
    definition: 'CREATE TRIGGER flavors_price_history AFTER INSERT OR UPDATE OF cost_per_hour ON public.flavors FOR EACH ROW EXECUTE FUNCTION qm_flavor_price_history()',
    migration: LEDGER,
  },
  statementTrigger('flavors_snapshot', 'flavors', 'INSERT OR DELETE OR UPDATE', "qm_snapshot_table_changed('flavor')"),
  {
    name: 'job_transitions_usage',
    table: 'job_transitions',
    definition: 'CREATE TRIGGER job_transitions_usage AFTER INSERT ON public.job_transitions REFERENCING NEW TABLE AS new_transitions FOR EACH STATEMENT EXECUTE FUNCTION qm_usage_from_transitions()',
    migration: LEDGER,
  },
  statementTrigger('jobs_snapshot_delete', 'jobs', 'DELETE', 'qm_snapshot_jobs_changed()', 'REFERENCING OLD TABLE AS old_rows '),
  statementTrigger('jobs_snapshot_insert', 'jobs', 'INSERT', 'qm_snapshot_jobs_changed()', 'REFERENCING NEW TABLE AS new_rows '),
  statementTrigger('jobs_snapshot_update', 'jobs', 'UPDATE', 'qm_snapshot_jobs_changed()', 'REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows '),
  statementTrigger('nodes_snapshot_delete', 'nodes', 'DELETE', 'qm_snapshot_nodes_changed()', 'REFERENCING OLD TABLE AS old_rows '),
  statementTrigger('nodes_snapshot_insert', 'nodes', 'INSERT', 'qm_snapshot_nodes_changed()', 'REFERENCING NEW TABLE AS new_rows '),
  statementTrigger('nodes_snapshot_update', 'nodes', 'UPDATE', 'qm_snapshot_nodes_changed()', 'REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows '),
  statementTrigger('quotas_snapshot', 'quotas', 'INSERT OR DELETE OR UPDATE', "qm_snapshot_table_changed('quota')"),
  statementTrigger('teams_snapshot', 'teams', 'INSERT OR DELETE OR UPDATE', "qm_snapshot_table_changed('team')"),
];
