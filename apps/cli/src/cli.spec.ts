import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { runCycle } from '#core';
import { buildProgram, runCli } from './cli.js';
import type { QmIo } from './io.js';

function io(): QmIo & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    stdout: { write: (s: string) => ((out += s), true) },
    stderr: { write: (s: string) => ((err += s), true) },
    repoRoot: process.cwd(),
    cwd: process.cwd(),
    env: { XDG_CONFIG_HOME: '/nonexistent/qm-spec' },
    scheduler: runCycle,
    now: () => 0,
    out: () => out,
    err: () => err,
  };
}

function paths(cmd: Command, prefix: string[] = []): string[][] {
  return cmd.commands.flatMap((c) => [[...prefix, c.name()], ...paths(c, [...prefix, c.name()])]);
}

const program = buildProgram(io(), () => undefined).program;

describe('qm --help', () => {
  it.each(paths(program).filter((p) => p[0] !== 'help'))('qm %s --help exits 0 and shows an example', async (...path) => {
    const x = io();
    expect(await runCli([...path, '--help'], x)).toBe(0);
    expect(x.out()).toMatch(/\nExamples?:\n {2}\$ qm /);
  });
});

describe('qm --version', () => {
  it.each([['--version'], ['-V']])('%s prints the package version and the API version, exit 0', async (flag) => {
    const x = io();
    expect(await runCli([flag], x)).toBe(0);
    const { version } = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')) as { version: string };
    expect(x.out()).toBe(`qm ${version} (REST API v1)\n`);
  });
});

describe('qm completion', () => {
  const script = (shell: string): string => {
    const x = io();
    void runCli(['completion', shell], x);
    return x.out();
  };

  it('bash: completes commands, nested commands, options and their values', async () => {
    const x = io();
    expect(await runCli(['completion', 'bash'], x)).toBe(0);
    const complete = (words: string[]): string[] => {
      const cword = words.length - 1;
      const r = spawnSync('bash', ['-c', `${x.out()}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${cword}; _qm; printf '%s\\n' "\${COMPREPLY[@]}"`], { encoding: 'utf8' });
      expect(r.stderr).toBe('');
      return r.stdout.split('\n').filter((l) => l !== '');
    };
    expect(complete(['qm', 'su'])).toEqual(['submit']);
    expect(complete(['qm', 'quota', 's'])).toEqual(['set']);
    expect(complete(['qm', 'ls', '--st'])).toEqual(['--state']);
    expect(complete(['qm', 'ls', '-o', 'w'])).toEqual(['wide']);
    expect(complete(['qm', '--server', 'http://x', 'ls', '--al'])).toEqual(['--all-teams']);
    expect(complete(['qm', 'completion', ''])).toEqual(expect.arrayContaining(['--help']));
  });

  it('zsh: a #compdef script naming every command but the hidden __complete', async () => {
    const text = await Promise.resolve(script('zsh'));
    expect(text.startsWith('#compdef qm\n')).toBe(true);
    for (const p of paths(program).filter((p) => p[0] !== 'help' && p[0] !== '__complete')) expect(text).toContain(`"${p.join(' ')}")`);
    expect(text).not.toContain('"__complete")');
    // -o offers its formats, not files; -f offers files.
    expect(text).toContain("'(-o --output)'{-o,--output}'[text | name | json | yaml (json the job with its events)]:format:(text name json yaml)'");
    expect(text).toContain("'(-f --file)'{-f,--file}'[job file (YAML or JSON); - reads stdin]:path:_files'");
  });
});
