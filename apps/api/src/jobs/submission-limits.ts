import { Inject, Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { Config, LimitExceededError } from '#common';
import { podsNamespace, type PodPolicy } from '#core';
import { PendingLimitError, TeamRepository, type TeamLimitsRecord } from '#db';
import { withTimeout } from '../infra/redis.js';
import { LOGGER, REDIS, REDIS_PREFIX } from '../infra/tokens.js';
import { ReloadedSnapshot } from './reloaded-snapshot.js';

/** Seconds a client refused for a full team (maxPendingJobs) is asked to wait: jobs leave PENDING as the scheduler admits them. */
export const PENDING_LIMIT_RETRY_AFTER_SECONDS = 30;

/** A team may submit a burst of this many seconds' worth of its rate at once (the bucket's size), then `rate` per second. */
export const SUBMISSION_BURST_SECONDS = 5;

/** How long the rate limiter waits for Redis before it lets the submission through (fails open). */
const REDIS_TIMEOUT_MS = 500;

/** At most one log line per this long while Redis fails (with how many submissions went unlimited meanwhile). */
const FAIL_OPEN_LOG_INTERVAL_MS = 10_000;

/**
 * The teams' own submission limits and pod policies, as submissions read them: kept in memory for QM_TOKEN_CACHE_TTL_MS
 * (as tokens and priority ceilings are), reloaded as a whole when older, dropped at once when this process
 * changes a team; another replica's change applies here within the TTL. TTL 0: read on every submission.
 */
@Injectable()
export class TeamSettingsCache {
  private readonly snapshot: ReloadedSnapshot<Map<string, TeamLimitsRecord>>;

  constructor(
    @Inject(TeamRepository) teams: TeamRepository,
    @Inject(Config) private readonly config: Config,
  ) {
    this.snapshot = new ReloadedSnapshot(async () => new Map((await teams.limits()).map((r) => [r.name, r])), () => config.tokenCacheTtlMs);
  }

  /** The team's submissions per second: its own, or the default (also for a team not known: the insert answers it 422). */
  async submissionsPerSecond(team: string): Promise<number> {
    let limits = await this.snapshot.current();
    if (!limits.has(team)) limits = await this.snapshot.reload();
    return limits.get(team)?.submissionsPerSecond ?? this.config.teamSubmissionsPerSecond;
  }

  /** The team's pod policy; null for a team not known (the insert answers it 422). */
  async podPolicy(team: string): Promise<PodPolicy | null> {
    let settings = await this.snapshot.current();
    if (!settings.has(team)) settings = await this.snapshot.reload();
    return settings.get(team)?.podPolicy ?? null;
  }

  /** The namespace its REST jobs' pods go to (libs/core podsNamespace); null for a team not known (the insert answers it 422). */
  async podsNamespace(team: string): Promise<string | null> {
    let settings = await this.snapshot.current();
    if (!settings.has(team)) settings = await this.snapshot.reload();
    const record = settings.get(team);
    return record === undefined ? null : podsNamespace(team, record.namespaces);
  }

  /** A team changed through this process. */
  invalidate(): void {
    this.snapshot.invalidate();
  }
}

/**
 * A token bucket per team in Redis, shared by every API replica: it holds up to `capacity` tokens (a burst
 * of SUBMISSION_BURST_SECONDS' worth), refills at `rate` per second by Redis' own clock, and a submission takes one. One
 * script call per submission, atomic in Redis. Returns [1, 0] when taken, else [0, ms until one is there].
 */
const TOKEN_BUCKET = `
local rate = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1])
local at = tonumber(state[2])
if tokens == nil or at == nil then
  tokens = capacity
  at = now
end
if now > at then
  tokens = math.min(capacity, tokens + (now - at) * rate / 1000)
  at = now
end
if tokens > capacity then tokens = capacity end
local allowed = 0
local wait = 0
if tokens >= cost then
  tokens = tokens - cost
  allowed = 1
else
  wait = math.ceil((cost - tokens) * 1000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(at))
redis.call('PEXPIRE', KEYS[1], math.ceil(capacity * 1000 / rate) + 1000)
return {allowed, wait}
`;

type BucketRedis = Redis & { qmSubmitBucket(key: string, rate: number, capacity: number, cost: number): Promise<[number, number]> };

/**
 * Per-team limits on job submissions, as POST /v1/jobs applies them after authorisation:
 * `submissionsPerSecond` here (Redis, under this deployment's key prefix, so it holds across API
 * replicas), `maxPendingJobs` in the database with the insert itself (libs/db pending-limit.ts: atomic
 * with it, under a lock of the team's row). Both refuse with 429 problem+json naming the limit, with
 * Retry-After, and write nothing.
 *
 * Redis unreachable, failing or slow: the rate limit fails open — the submission goes on (the pending cap
 * still holds) and a warning is logged (at most one line per 10 s, with the count) — never a 5xx.
 */
@Injectable()
export class SubmissionLimits {
  private readonly redis: BucketRedis;
  private failOpen = { count: 0, loggedAt: 0 };

  constructor(
    @Inject(REDIS) redis: Redis,
    @Inject(REDIS_PREFIX) private readonly prefix: string,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(TeamSettingsCache) private readonly limits: TeamSettingsCache,
  ) {
    if (typeof (redis as unknown as Partial<BucketRedis>).qmSubmitBucket !== 'function') redis.defineCommand('qmSubmitBucket', { numberOfKeys: 1, lua: TOKEN_BUCKET });
    this.redis = redis as unknown as BucketRedis;
  }

  /** Takes `count` submissions from the team's rate; LimitExceededError (429) when it has none left. */
  async admit(team: string, count = 1): Promise<void> {
    const rate = await this.limits.submissionsPerSecond(team);
    let answer: [number, number];
    try {
      answer = await withTimeout(this.redis.qmSubmitBucket(`${this.prefix}:submit-rate:${team}`, rate, rate * SUBMISSION_BURST_SECONDS, count), REDIS_TIMEOUT_MS, 'redis');
    } catch (error) {
      this.failedOpen(team, error);
      return;
    }
    const [allowed, waitMs] = answer;
    if (allowed === 1) return;
    const retryAfter = Math.max(1, Math.ceil(Number(waitMs) / 1000));
    throw new LimitExceededError(
      'submissionsPerSecond',
      `team ${team} may submit at most ${rate} job(s) per second (limits.submissionsPerSecond; bursts of ${rate * SUBMISSION_BURST_SECONDS}): nothing was created; retry after ${retryAfter} s, or ask an admin to raise the limit`,
      retryAfter,
    );
  }

  private failedOpen(team: string, error: unknown): void {
    const now = Date.now();
    this.failOpen.count += 1;
    if (now - this.failOpen.loggedAt < FAIL_OPEN_LOG_INTERVAL_MS) return;
    this.logger.warn(
      { team, unlimited: this.failOpen.count, reason: error instanceof Error ? error.message : String(error) },
      'submission rate limit not applied: Redis unavailable (failing open; the pending-job limit still holds)',
    );
    this.failOpen = { count: 0, loggedAt: now };
  }
}

/** The 429 of a submission refused by the team's pending-job limit (raised by the insert, libs/db). */
export function pendingLimitExceeded(error: PendingLimitError): LimitExceededError {
  return new LimitExceededError(
    'maxPendingJobs',
    `team ${error.team} already has ${error.pending} pending job(s), its limit (limits.maxPendingJobs = ${error.limit}): nothing was created; ` +
      'retry once some have started or were cancelled, or ask an admin to raise the limit',
    PENDING_LIMIT_RETRY_AFTER_SECONDS,
  );
}
