import { createHash, timingSafeEqual } from 'node:crypto';
import { accessSync, constants } from 'node:fs';

export type Env = Readonly<Record<string, string | undefined>>;

/** A setting that is missing or wrong. The message is one line: which setting, what is wrong, how to fix it. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The documented settings, their defaults and meaning (also printed in docs/api-quickstart.md). */
export const CONFIG_DEFAULTS = {
  PORT: '8080',
  HOST: '127.0.0.1',
  DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/quartermaster',
  REDIS_URL: 'redis://127.0.0.1:6379',
  LOG_LEVEL: 'info',
  QM_DB_POOL_SIZE: '16',
  QM_DB_CONNECT_TIMEOUT_MS: '1000',
  QM_DB_PROBE_INTERVAL_MS: '500',
  QM_DB_STATEMENT_TIMEOUT_MS: '15000',
  QM_DB_QUERY_TIMEOUT_MS: '20000',
  QM_DB_IDLE_IN_TRANSACTION_MS: '10000',
  QM_READY_TIMEOUT_MS: '1000',
  QM_BODY_LIMIT_BYTES: '1048576',
  QM_MAX_TEMPLATE_BYTES: '65536',
  QM_HTTP_REQUEST_TIMEOUT_MS: '30000',
  QM_HTTP_KEEP_ALIVE_TIMEOUT_MS: '72000',
  QM_HTTP_IDLE_TIMEOUT_MS: '300000',
  QM_TOKEN_CACHE_TTL_MS: '5000',
  QM_SUBMIT_GROUP_MAX: '128',
  QM_SUBMIT_IN_FLIGHT: '2',
  QM_BUDGET_CHECK_INTERVAL_MS: '30000',
  QM_TEAM_MAX_PENDING_JOBS: '50000',
  QM_TEAM_SUBMISSIONS_PER_SECOND: '200',
  QM_TOKEN_TTL_DAYS: '90',
} as const;

/**
 * The range of QM_MAX_TEMPLATE_BYTES: at least room for the longest image name a template may have (1,024
 * characters) with its defaults; at most 1 MiB, below the ~1.5 MiB Kubernetes stores of any one object, which
 * a pod carrying the template must fit in.
 */
export const TEMPLATE_BYTES_RANGE = { min: 4096, max: 1024 * 1024 } as const;

/** The highest figure each per-team limit (and its default) may be set to. */
export const TEAM_LIMIT_MAX = { maxPendingJobs: 10_000_000, submissionsPerSecond: 1_000_000 } as const;

/** Removes the password from a connection URL, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '<unparseable URL>';
  }
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** The values of a Config (without its methods). */
export type ConfigValues = { readonly [K in keyof Config as Config[K] extends (...args: never[]) => unknown ? never : K]: Config[K] };

/**
 * The whole configuration of a Quartermaster process, validated once at start-up. Nothing else reads
 * `process.env`: the entry point passes the environment to `Config.fromEnv` and hands the result around.
 */
export class Config {
  /** HTTP port; 0 picks a free one (tests). */
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string;
  readonly redisUrl: string;
  /** sha256 (hex) of QM_ADMIN_TOKEN; the token itself is not kept. */
  readonly adminTokenHash: string;
  /**
   * sha256 (hex) of QM_METRICS_TOKEN, or null (unset). When set, GET /metrics of the API needs
   * `Authorization: Bearer <QM_METRICS_TOKEN>` (Prometheus' bearer_token) and /readyz shows callers without
   * it only ok/unavailable per dependency (no error text, no leader host:pid). Unset: both are open.
   */
  readonly metricsTokenHash: string | null;
  /** Kubernetes mode when set: path of a readable kubeconfig file. */
  readonly kubeconfig: string | null;
  readonly logLevel: LogLevel;
  readonly dbPoolSize: number;
  /** Postgres timeouts, ms (0 = none): see `DbTimeouts`. */
  readonly dbTimeouts: DbTimeouts;
  /** Timeout of each dependency check of /readyz and of the start-up checks. */
  readonly readyTimeoutMs: number;
  readonly bodyLimitBytes: number;
  /**
   * Most bytes of a job's pod template as stored (its JSON, defaults filled in): QM_MAX_TEMPLATE_BYTES. A larger
   * one is a 400 naming `template`. Bounds what one job costs every reader of it (ADR 0025).
   */
  readonly maxTemplateBytes: number;
  /** How long the API keeps a connection that is slow to send its request, or silent: see `HttpTimeouts`. */
  readonly httpTimeouts: HttpTimeouts;
  /** How long a resolved API token is cached in memory before its row is read again. */
  readonly tokenCacheTtlMs: number;
  /** Most job submissions written by one statement (group commit). */
  readonly submitGroupMax: number;
  /** Most submission statements in flight at once; more submissions wait and go in the next group. */
  readonly submitInFlight: number;
  /** How often the API records budgets that reached 80% / 100% (an event each, once per period); 0 = never. */
  readonly budgetCheckIntervalMs: number;
  /** Most PENDING jobs of a team whose `limits.maxPendingJobs` is not set (QM_TEAM_MAX_PENDING_JOBS). */
  readonly teamMaxPendingJobs: number;
  /** Most submissions per second of a team whose `limits.submissionsPerSecond` is not set (QM_TEAM_SUBMISSIONS_PER_SECOND). */
  readonly teamSubmissionsPerSecond: number;
  /** Days a stored token lives when created without `expiresAt` (and without `neverExpires: true`): QM_TOKEN_TTL_DAYS. */
  readonly tokenTtlDays: number;

  private constructor(values: ConfigValues) {
    this.port = values.port;
    this.host = values.host;
    this.databaseUrl = values.databaseUrl;
    this.redisUrl = values.redisUrl;
    this.adminTokenHash = values.adminTokenHash;
    this.metricsTokenHash = values.metricsTokenHash;
    this.kubeconfig = values.kubeconfig;
    this.logLevel = values.logLevel;
    this.dbPoolSize = values.dbPoolSize;
    this.dbTimeouts = values.dbTimeouts;
    this.readyTimeoutMs = values.readyTimeoutMs;
    this.bodyLimitBytes = values.bodyLimitBytes;
    this.maxTemplateBytes = values.maxTemplateBytes;
    this.httpTimeouts = values.httpTimeouts;
    this.tokenCacheTtlMs = values.tokenCacheTtlMs;
    this.submitGroupMax = values.submitGroupMax;
    this.submitInFlight = values.submitInFlight;
    this.budgetCheckIntervalMs = values.budgetCheckIntervalMs;
    this.teamMaxPendingJobs = values.teamMaxPendingJobs;
    this.teamSubmissionsPerSecond = values.teamSubmissionsPerSecond;
    this.tokenTtlDays = values.tokenTtlDays;
  }

  /** Reads and validates every setting; throws ConfigError (one line) on the first bad one. */
  static fromEnv(env: Env): Config {
    const read = (name: keyof typeof CONFIG_DEFAULTS): string => {
      const v = env[name];
      return v === undefined || v.trim() === '' ? CONFIG_DEFAULTS[name] : v.trim();
    };
    const adminToken = env.QM_ADMIN_TOKEN?.trim() ?? '';
    if (adminToken === '') {
      throw new ConfigError(
        'QM_ADMIN_TOKEN is not set: set it to a secret of at least 16 characters, e.g. export QM_ADMIN_TOKEN=$(openssl rand -hex 24)',
      );
    }
    if (adminToken.length < 16) {
      throw new ConfigError(`QM_ADMIN_TOKEN is too short (${adminToken.length} characters): use at least 16, e.g. $(openssl rand -hex 24)`);
    }
    const metricsToken = env.QM_METRICS_TOKEN?.trim() ?? '';
    if (metricsToken !== '' && metricsToken.length < 16) {
      throw new ConfigError(`QM_METRICS_TOKEN is too short (${metricsToken.length} characters): use at least 16, or leave it unset to keep /metrics open`);
    }
    const kubeconfig = env.KUBECONFIG?.trim() ? env.KUBECONFIG.trim() : null;
    if (kubeconfig !== null) {
      try {
        accessSync(kubeconfig, constants.R_OK);
      } catch {
        throw new ConfigError(`KUBECONFIG=${kubeconfig} is not a readable file: fix the path, or unset KUBECONFIG to run without Kubernetes`);
      }
    }
    const logLevel = read('LOG_LEVEL');
    if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
      throw new ConfigError(`LOG_LEVEL=${logLevel} is not a level: use one of ${LOG_LEVELS.join(', ')}`);
    }
    return new Config({
      port: int(read('PORT'), 'PORT', 0, 65535),
      host: read('HOST'),
      databaseUrl: url(read('DATABASE_URL'), 'DATABASE_URL', ['postgres:', 'postgresql:'], true),
      redisUrl: url(read('REDIS_URL'), 'REDIS_URL', ['redis:', 'rediss:'], false),
      adminTokenHash: sha256Hex(adminToken),
      metricsTokenHash: metricsToken === '' ? null : sha256Hex(metricsToken),
      kubeconfig,
      logLevel: logLevel as LogLevel,
      dbPoolSize: int(read('QM_DB_POOL_SIZE'), 'QM_DB_POOL_SIZE', 1, 500),
      dbTimeouts: dbTimeouts(read),
      httpTimeouts: httpTimeouts(read),
      readyTimeoutMs: int(read('QM_READY_TIMEOUT_MS'), 'QM_READY_TIMEOUT_MS', 10, 120_000),
      bodyLimitBytes: int(read('QM_BODY_LIMIT_BYTES'), 'QM_BODY_LIMIT_BYTES', 1024, 64 * 1024 * 1024),
      maxTemplateBytes: int(read('QM_MAX_TEMPLATE_BYTES'), 'QM_MAX_TEMPLATE_BYTES', TEMPLATE_BYTES_RANGE.min, TEMPLATE_BYTES_RANGE.max),
      tokenCacheTtlMs: int(read('QM_TOKEN_CACHE_TTL_MS'), 'QM_TOKEN_CACHE_TTL_MS', 0, 3_600_000),
      submitGroupMax: int(read('QM_SUBMIT_GROUP_MAX'), 'QM_SUBMIT_GROUP_MAX', 1, 1000),
      submitInFlight: int(read('QM_SUBMIT_IN_FLIGHT'), 'QM_SUBMIT_IN_FLIGHT', 1, 64),
      budgetCheckIntervalMs: int(read('QM_BUDGET_CHECK_INTERVAL_MS'), 'QM_BUDGET_CHECK_INTERVAL_MS', 0, 86_400_000),
      teamMaxPendingJobs: int(read('QM_TEAM_MAX_PENDING_JOBS'), 'QM_TEAM_MAX_PENDING_JOBS', 1, TEAM_LIMIT_MAX.maxPendingJobs),
      teamSubmissionsPerSecond: int(read('QM_TEAM_SUBMISSIONS_PER_SECOND'), 'QM_TEAM_SUBMISSIONS_PER_SECOND', 1, TEAM_LIMIT_MAX.submissionsPerSecond),
      tokenTtlDays: int(read('QM_TOKEN_TTL_DAYS'), 'QM_TOKEN_TTL_DAYS', 1, 36_500),
    });
  }

  /** A copy with some values replaced (tests: another database, port 0). */
  with(overrides: Partial<ConfigValues>): Config {
    const current: ConfigValues = { ...this };
    return new Config({ ...current, ...overrides });
  }
}

/**
 * How long Quartermaster waits on Postgres before it gives up (and the API answers 503
 * DATABASE_UNAVAILABLE), so that an unreachable or black-holed Postgres never hangs a request or a cycle.
 */
export interface DbTimeouts {
  /** Opening a connection (QM_DB_CONNECT_TIMEOUT_MS). */
  connectTimeoutMs: number;
  /** Server-side limit per statement (QM_DB_STATEMENT_TIMEOUT_MS; 0 = none). */
  statementTimeoutMs: number;
  /** Client-side limit per query, for a link that stopped answering (QM_DB_QUERY_TIMEOUT_MS; 0 = none). */
  queryTimeoutMs: number;
  /** The server ends a session idle inside a transaction this long (QM_DB_IDLE_IN_TRANSACTION_MS; 0 = none). */
  idleInTransactionMs: number;
  /**
   * Postgres is probed this often (QM_DB_PROBE_INTERVAL_MS; 0 = never); a probe unanswered within the
   * connect timeout drops every connection, so nothing waits on a black-holed link.
   */
  probeIntervalMs: number;
}

function dbTimeouts(read: (name: keyof typeof CONFIG_DEFAULTS) => string): DbTimeouts {
  const timeouts: DbTimeouts = {
    connectTimeoutMs: int(read('QM_DB_CONNECT_TIMEOUT_MS'), 'QM_DB_CONNECT_TIMEOUT_MS', 100, 600_000),
    statementTimeoutMs: int(read('QM_DB_STATEMENT_TIMEOUT_MS'), 'QM_DB_STATEMENT_TIMEOUT_MS', 0, 3_600_000),
    queryTimeoutMs: int(read('QM_DB_QUERY_TIMEOUT_MS'), 'QM_DB_QUERY_TIMEOUT_MS', 0, 3_600_000),
    idleInTransactionMs: int(read('QM_DB_IDLE_IN_TRANSACTION_MS'), 'QM_DB_IDLE_IN_TRANSACTION_MS', 0, 3_600_000),
    probeIntervalMs: int(read('QM_DB_PROBE_INTERVAL_MS'), 'QM_DB_PROBE_INTERVAL_MS', 0, 3_600_000),
  };
  const { statementTimeoutMs: statement, queryTimeoutMs: query } = timeouts;
  if (query !== 0 && (statement === 0 || statement >= query)) {
    throw new ConfigError(
      `QM_DB_QUERY_TIMEOUT_MS=${query} must exceed QM_DB_STATEMENT_TIMEOUT_MS=${statement || 'none'}: Postgres should cancel a slow statement before the client gives up on its connection (raise QM_DB_QUERY_TIMEOUT_MS, or set it to 0)`,
    );
  }
  return timeouts;
}

/**
 * What a client may hold of the API's sockets without sending a request: a connection that sends nothing,
 * headers that never finish (slowloris) or a body that never comes is closed, so no member can pile up open
 * sockets and buffers, and a shutdown does not wait on them.
 */
export interface HttpTimeouts {
  /** A whole request, headers and body, must arrive within this (QM_HTTP_REQUEST_TIMEOUT_MS; 408 and closed after). */
  requestMs: number;
  /** A keep-alive connection idle after its answer is closed after this (QM_HTTP_KEEP_ALIVE_TIMEOUT_MS; above a load balancer's idle timeout, e.g. 60 s). */
  keepAliveMs: number;
  /** A socket with no traffic either way is closed after this (QM_HTTP_IDLE_TIMEOUT_MS; also bounds the slowest answer's silence). */
  idleMs: number;
}

function httpTimeouts(read: (name: keyof typeof CONFIG_DEFAULTS) => string): HttpTimeouts {
  return {
    requestMs: int(read('QM_HTTP_REQUEST_TIMEOUT_MS'), 'QM_HTTP_REQUEST_TIMEOUT_MS', 100, 3_600_000),
    keepAliveMs: int(read('QM_HTTP_KEEP_ALIVE_TIMEOUT_MS'), 'QM_HTTP_KEEP_ALIVE_TIMEOUT_MS', 100, 3_600_000),
    idleMs: int(read('QM_HTTP_IDLE_TIMEOUT_MS'), 'QM_HTTP_IDLE_TIMEOUT_MS', 100, 3_600_000),
  };
}

function int(raw: string, name: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name}=${raw} is not a whole number: set it to an integer from ${min} to ${max}`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name}=${raw} is out of range: set it to an integer from ${min} to ${max}`);
  return n;
}

function url(raw: string, name: string, protocols: string[], needsPath: boolean): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError(`${name} is not a URL (${redactUrl(raw)}): use e.g. ${CONFIG_DEFAULTS[name as keyof typeof CONFIG_DEFAULTS]}`);
  }
  if (!protocols.includes(u.protocol)) {
    throw new ConfigError(`${name}=${redactUrl(raw)} must start with ${protocols.map((p) => `${p}//`).join(' or ')}`);
  }
  if (needsPath && u.pathname.replace(/^\//, '') === '') {
    throw new ConfigError(`${name}=${redactUrl(raw)} names no database: add one, e.g. ${CONFIG_DEFAULTS.DATABASE_URL}`);
  }
  return raw;
}

/** Whether an Authorization header carries the secret whose sha256 is `hash` (constant time). */
export function bearerMatches(header: string | string[] | undefined, hash: string): boolean {
  if (typeof header !== 'string') return false;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match?.[1]) return false;
  return timingSafeEqual(Buffer.from(sha256Hex(match[1]), 'hex'), Buffer.from(hash, 'hex'));
}
