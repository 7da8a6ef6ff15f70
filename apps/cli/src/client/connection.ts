import { CliFailure, UsageError } from '../errors.js';
import { ApiClient } from './api-client.js';
import { configPath, readConfig, type StoredConfig } from './config-file.js';

/** `--server` and `--token`: accepted by every command that talks to the API, before or after its name. */
export interface GlobalFlags {
  server?: string;
  token?: string;
}

export interface Connection {
  client: ApiClient;
  server: string;
  /** `QM_TEAM`, else the `team` of the config file. */
  defaultTeam: string | undefined;
}

/** Checks that `text` is an http(s) URL; returns it without a trailing slash. */
export function serverUrl(text: string, source: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new (source === '--server' ? UsageError : CliFailure)(`${source} '${text}' is not a URL; expected e.g. http://localhost:8080`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new (source === '--server' ? UsageError : CliFailure)(`${source} '${text}' must be an http:// or https:// URL`);
  }
  return text.replace(/\/+$/, '');
}

/**
 * Where and as whom to connect. Each setting comes from the first of: the flag, the environment
 * (`QM_SERVER`, `QM_TOKEN`, `QM_TEAM`), the config file written by `qm login`.
 */
export function resolveConnection(flags: GlobalFlags, env: NodeJS.ProcessEnv, warn: (line: string) => void): Connection {
  const path = configPath(env);
  let stored: StoredConfig | undefined;
  const config = (): StoredConfig => (stored ??= readConfig(path, warn));
  const pick = (flag: string | undefined, flagName: string, envName: string, key: keyof StoredConfig): { value: string; source: string } | undefined => {
    if (flag !== undefined) return { value: flag, source: flagName };
    const fromEnv = env[envName];
    if (fromEnv !== undefined && fromEnv !== '') return { value: fromEnv, source: envName };
    const fromFile = config()[key];
    return fromFile === undefined ? undefined : { value: fromFile, source: path };
  };
  const server = pick(flags.server, '--server', 'QM_SERVER', 'server');
  const token = pick(flags.token, '--token', 'QM_TOKEN', 'token');
  if (server === undefined || token === undefined) {
    const missing = [server === undefined ? 'server' : null, token === undefined ? 'token' : null].filter((x) => x !== null).join(' and ');
    throw new CliFailure(`no ${missing} configured: run qm login --server URL --token TOKEN (or set QM_SERVER and QM_TOKEN)`);
  }
  if (token.value.trim() === '') throw new CliFailure(`the token from ${token.source} is empty`);
  const url = serverUrl(server.value, server.source);
  const team = env.QM_TEAM !== undefined && env.QM_TEAM !== '' ? env.QM_TEAM : config().team;
  return { client: new ApiClient(url, token.value.trim()), server: url, defaultTeam: team };
}
