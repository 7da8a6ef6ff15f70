import { describe, expect, it } from '@jest/globals';
import { chmodSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configPath, readConfig, writeConfig } from './config-file.js';

describe('the config file', () => {
  it('lives under $XDG_CONFIG_HOME, else ~/.config', () => {
    expect(configPath({ XDG_CONFIG_HOME: '/x/cfg', HOME: '/home/a' })).toBe('/x/cfg/quartermaster/config.yaml');
    expect(configPath({ HOME: '/home/a' })).toBe('/home/a/.config/quartermaster/config.yaml');
    expect(configPath({ XDG_CONFIG_HOME: 'relative', HOME: '/home/a' })).toBe('/home/a/.config/quartermaster/config.yaml');
  });

  it('is written with mode 0600 in a 0700 directory, replaced atomically, and read back', () => {
    const dir = mkdtempSync(join(tmpdir(), 'qm-cfg-'));
    const path = join(dir, 'quartermaster', 'config.yaml');
    writeConfig(path, { server: 'http://a', token: 't1' });
    writeConfig(path, { server: 'http://b', token: 't2', team: 'vision' });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'quartermaster')).mode & 0o777).toBe(0o700);
    expect(readdirSync(join(dir, 'quartermaster'))).toEqual(['config.yaml']);
    const warnings: string[] = [];
    expect(readConfig(path, (l) => warnings.push(l))).toEqual({ server: 'http://b', token: 't2', team: 'vision' });
    expect(warnings).toEqual([]);
  });

  it('warns when others may read it, and reports a broken file in one line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'qm-cfg-'));
    const path = join(dir, 'config.yaml');
    writeFileSync(path, 'server: http://a\ntoken: t\n');
    chmodSync(path, 0o644);
    const warnings: string[] = [];
    expect(readConfig(path, (l) => warnings.push(l))).toEqual({ server: 'http://a', token: 't' });
    expect(warnings).toEqual([`warning: ${path} is readable by other users (mode 644); run: chmod 600 ${path}`]);
    writeFileSync(path, 'server: [\n');
    expect(() => readConfig(path, () => undefined)).toThrow(/is not valid YAML .*; fix it or run qm login again$/);
    writeFileSync(path, 'token: 42\n');
    expect(() => readConfig(path, () => undefined)).toThrow(`${path}: token must be a string`);
    expect(readConfig(join(dir, 'absent.yaml'), () => undefined)).toEqual({});
  });
});
