import { chmodSync, closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse, stringify } from 'yaml';
import { CliFailure } from '../errors.js';

/** What `qm login` stores: the API's URL, the bearer token, and optionally a default team. */
export interface StoredConfig {
  server?: string;
  token?: string;
  team?: string;
}

/** `$XDG_CONFIG_HOME/quartermaster/config.yaml`, `~/.config/quartermaster/config.yaml` when unset or not absolute. */
export function configPath(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg !== undefined && xdg.startsWith('/') ? xdg : join(env.HOME ?? homedir(), '.config');
  return join(base, 'quartermaster', 'config.yaml');
}

/** The stored configuration; an absent file is an empty configuration. */
export function readConfig(path: string, warn: (line: string) => void): StoredConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return {};
    throw new CliFailure(`cannot read ${path}: ${code === 'EACCES' ? 'permission denied' : (error as Error).message}`);
  }
  try {
    const mode = statSync(path).mode & 0o777;
    if ((mode & 0o077) !== 0) warn(`warning: ${path} is readable by other users (mode ${mode.toString(8)}); run: chmod 600 ${path}`);
  } catch {
    // stat raced a removal: the content read above is what counts
  }
  let value: unknown;
  try {
    value = parse(text);
  } catch (error) {
    throw new CliFailure(`${path} is not valid YAML (${firstLine(error)}); fix it or run qm login again`);
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new CliFailure(`${path} must hold a mapping (server, token, team); run qm login again`);
  const out: StoredConfig = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if (key !== 'server' && key !== 'token' && key !== 'team') continue; // unknown keys are ignored
    if (typeof v !== 'string') throw new CliFailure(`${path}: ${key} must be a string`);
    out[key] = v;
  }
  return out;
}

/**
 * Writes the configuration with mode 0600 (directory 0700): a temporary file created with that mode,
 * flushed and renamed over the old one, so a crash never leaves a half-written or world-readable token.
 */
export function writeConfig(path: string, config: StoredConfig): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = join(dir, `.config.yaml.${process.pid}.${Date.now()}`);
  const body = `# written by qm login; holds a bearer token: keep it private (mode 0600)\n${stringify(dropUndefined(config))}`;
  let fd: number | undefined;
  try {
    fd = openSync(tmp, 'wx', 0o600);
    writeSync(fd, body);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    chmodSync(tmp, 0o600); // the umask cannot widen it, but an inherited ACL default could
    renameSync(tmp, path);
  } catch (error) {
    if (fd !== undefined) closeSync(fd);
    try {
      unlinkSync(tmp);
    } catch {
      // nothing to clean up
    }
    throw new CliFailure(`cannot write ${path}: ${(error as NodeJS.ErrnoException).code === 'EACCES' ? 'permission denied' : firstLine(error)}`);
  }
}

function dropUndefined(config: StoredConfig): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of ['server', 'token', 'team'] as const) {
    const v = config[key];
    if (v !== undefined) out[key] = v;
  }
  return out;
}

const firstLine = (error: unknown): string => (error instanceof Error ? (error.message.split('\n')[0] ?? error.name) : String(error));
