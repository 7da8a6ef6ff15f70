/**
 * The REST answers the console reads: the API's generated contract (libs/api-client, `npm run api:contract`),
 * never declared here by hand.
 */
export type {
  AuditEntry,
  Budget,
  Flavor,
  FlavorCapacity,
  FleetHistory,
  FleetHistoryPoint,
  FleetNode,
  History,
  Job,
  JobDetail,
  JobEvent,
  JobState,
  Overview,
  Placement,
  Queue as QueuePage,
  QuotaUsage,
  SchedulerStatus,
  Team,
  UsageItem as UsageFigures,
  UsageReport,
} from '#api-client';

/** A list answer's page. */
export interface Page<T> {
  items: T[];
}
