import { describe, expect, it } from '@jest/globals';
import { Config, ConfigError, sha256Hex } from './config.js';

const TOKEN = '0123456789abcdef0123';

describe('Config.fromEnv', () => {
  it('applies the documented defaults and keeps only the hash of the admin token', () => {
    const c = Config.fromEnv({ QM_ADMIN_TOKEN: TOKEN });
    expect(c).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      databaseUrl: 'postgresql://postgres@127.0.0.1:5432/quartermaster',
      redisUrl: 'redis://127.0.0.1:6379',
      kubeconfig: null,
      logLevel: 'info',
      adminTokenHash: sha256Hex(TOKEN),
      dbTimeouts: { connectTimeoutMs: 1000, statementTimeoutMs: 15000, queryTimeoutMs: 20000, idleInTransactionMs: 10000, probeIntervalMs: 500 },
      maxTemplateBytes: 65536,
      httpTimeouts: { requestMs: 30000, keepAliveMs: 72000, idleMs: 300000 },
    });
    expect(JSON.stringify(c)).not.toContain(TOKEN);
    expect(Config.fromEnv({ QM_ADMIN_TOKEN: TOKEN, QM_MAX_TEMPLATE_BYTES: '4096' }).maxTemplateBytes).toBe(4096);
  });

  it.each([
    [{}, /QM_ADMIN_TOKEN is not set/],
    [{ QM_ADMIN_TOKEN: 'short' }, /QM_ADMIN_TOKEN is too short/],
    [{ QM_ADMIN_TOKEN: TOKEN, PORT: 'eighty' }, /^PORT=eighty is not a whole number/],
    [{ QM_ADMIN_TOKEN: TOKEN, PORT: '70000' }, /^PORT=70000 is out of range/],
    [{ QM_ADMIN_TOKEN: TOKEN, DATABASE_URL: 'mysql://db/x' }, /^DATABASE_URL=mysql:\/\/db\/x must start with postgres/],
    [{ QM_ADMIN_TOKEN: TOKEN, DATABASE_URL: 'postgresql://u:hunter2@db:5432' }, /names no database/],
    [{ QM_ADMIN_TOKEN: TOKEN, DATABASE_URL: 'not a url' }, /^DATABASE_URL is not a URL/],
    [{ QM_ADMIN_TOKEN: TOKEN, REDIS_URL: 'http://x' }, /^REDIS_URL=http:\/\/x\/ must start with redis/],
    [{ QM_ADMIN_TOKEN: TOKEN, LOG_LEVEL: 'loud' }, /^LOG_LEVEL=loud is not a level/],
    [{ QM_ADMIN_TOKEN: TOKEN, KUBECONFIG: '/nonexistent/kubeconfig' }, /^KUBECONFIG=\/nonexistent\/kubeconfig is not a readable file/],
    [{ QM_ADMIN_TOKEN: TOKEN, QM_DB_POOL_SIZE: '0' }, /^QM_DB_POOL_SIZE=0 is out of range/],
    [{ QM_ADMIN_TOKEN: TOKEN, QM_MAX_TEMPLATE_BYTES: '4095' }, /^QM_MAX_TEMPLATE_BYTES=4095 is out of range: set it to an integer from 4096 to 1048576/],
    [{ QM_ADMIN_TOKEN: TOKEN, QM_MAX_TEMPLATE_BYTES: '64Ki' }, /^QM_MAX_TEMPLATE_BYTES=64Ki is not a whole number/],
    [{ QM_ADMIN_TOKEN: TOKEN, QM_HTTP_REQUEST_TIMEOUT_MS: '0' }, /^QM_HTTP_REQUEST_TIMEOUT_MS=0 is out of range: set it to an integer from 100 to 3600000/],
    [{ QM_ADMIN_TOKEN: TOKEN, QM_DB_CONNECT_TIMEOUT_MS: '0' }, /^QM_DB_CONNECT_TIMEOUT_MS=0 is out of range/],
    [{ QM_ADMIN_TOKEN: TOKEN, QM_DB_STATEMENT_TIMEOUT_MS: '5s' }, /^QM_DB_STATEMENT_TIMEOUT_MS=5s is not a whole number/],
    [{ QM_ADMIN_TOKEN: TOKEN, QM_DB_STATEMENT_TIMEOUT_MS: '30000' }, /^QM_DB_QUERY_TIMEOUT_MS=20000 must exceed QM_DB_STATEMENT_TIMEOUT_MS=30000/],
    [{ QM_ADMIN_TOKEN: TOKEN, QM_DB_STATEMENT_TIMEOUT_MS: '0' }, /^QM_DB_QUERY_TIMEOUT_MS=20000 must exceed QM_DB_STATEMENT_TIMEOUT_MS=none/],
  ])('refuses %j with one clear line', (env, message) => {
    let error: unknown;
    try {
      Config.fromEnv(env);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const text = (error as Error).message;
    expect(text).toMatch(message);
    expect(text).not.toContain('\n');
    expect(text).not.toContain('hunter2');
  });

  it('turns Postgres timeouts off with 0', () => {
    const c = Config.fromEnv({ QM_ADMIN_TOKEN: TOKEN, QM_DB_STATEMENT_TIMEOUT_MS: '0', QM_DB_QUERY_TIMEOUT_MS: '0', QM_DB_IDLE_IN_TRANSACTION_MS: '0' });
    expect(c.dbTimeouts).toEqual({ connectTimeoutMs: 1000, statementTimeoutMs: 0, queryTimeoutMs: 0, idleInTransactionMs: 0, probeIntervalMs: 500 });
  });

  it('with() overrides values (tests: another database, port 0)', () => {
    const c = Config.fromEnv({ QM_ADMIN_TOKEN: TOKEN }).with({ port: 0, databaseUrl: 'postgresql://postgres@127.0.0.1/other' });
    expect(c.port).toBe(0);
    expect(c.databaseUrl).toBe('postgresql://postgres@127.0.0.1/other');
    expect(c.adminTokenHash).toBe(sha256Hex(TOKEN));
  });
});
