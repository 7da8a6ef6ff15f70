import type { Command } from 'commander';
import { ApiClient } from '../client/api-client.js';
import type { Whoami } from '#api-client';
import { configPath, readConfig, writeConfig } from '../client/config-file.js';
import { serverUrl } from '../client/connection.js';
import type { CommandContext } from '../context.js';
import { CliFailure, UsageError } from '../errors.js';
import { machine, outputFormat } from '../output/render.js';
import { example, readStdin } from './common.js';

const describeCaller = (w: Whoami): string =>
  w.role === 'admin' ? `${w.subject} (role admin: every team)` : `${w.subject} (role ${w.role} of ${w.teams.join(', ')})`;

export function registerSession(program: Command, ctx: CommandContext): void {
  program
    .command('login')
    .description('check a server URL and token, and store them in the config file (mode 0600)')
    .option('--team <team>', 'default team for submit, ls, quota and usage')
    .addHelpText(
      'after',
      example(
        'qm login --server http://localhost:8080 --token qm_…',
        'echo "$TOKEN" | qm login --server https://qm.example.com --token - --team vision',
      ) +
        '\nStores server, token and team in $XDG_CONFIG_HOME/quartermaster/config.yaml (~/.config/… by default).\n' +
        'QM_SERVER, QM_TOKEN, QM_TEAM and --server/--token override it for one command.\n',
    )
    .action(async (opts: { team?: string }) => {
      const { server, token } = ctx.flags;
      if (server === undefined || token === undefined) throw new UsageError('qm login needs --server URL and --token TOKEN (--token - reads it from stdin)');
      const url = serverUrl(server, '--server');
      const secret = token === '-' ? (await readStdin(ctx.io, 'the token')).trim() : token.trim();
      if (secret === '') throw new UsageError('the token is empty');
      const client = new ApiClient(url, secret);
      const me = await client.get<Whoami>('/v1/whoami');
      if (opts.team !== undefined) {
        if (me.role === 'member' && !me.teams.includes(opts.team)) {
          throw new CliFailure(`${me.subject} may not act for team ${opts.team} (teams: ${me.teams.join(', ')})`);
        }
        if (me.role === 'admin') await client.get(`/v1/teams/${encodeURIComponent(opts.team)}`);
      }
      const path = configPath(ctx.io.env);
      const before = readConfig(path, (line) => ctx.warn(line));
      writeConfig(path, { server: url, token: secret, team: opts.team ?? (before.server === url ? before.team : undefined) });
      ctx.out(`logged in to ${url} as ${describeCaller(me)}; saved to ${path}\n`);
    });

  program
    .command('logout')
    .description('remove the stored token (the server URL and default team stay)')
    .addHelpText('after', example('qm logout'))
    .action(() => {
      const path = configPath(ctx.io.env);
      const before = readConfig(path, (line) => ctx.warn(line));
      if (before.token === undefined) {
        ctx.out(`no token stored in ${path}\n`);
        return;
      }
      writeConfig(path, { ...before, token: undefined });
      ctx.out(`token removed from ${path}\n`);
    });

  program
    .command('whoami')
    .description('who the token belongs to, its role and teams, and the server')
    .option('-o, --output <format>', 'table | json | yaml')
    .addHelpText('after', example('qm whoami', 'qm whoami -o json'))
    .action(async (opts: { output?: string }) => {
      const format = outputFormat(opts.output, ['table', 'json', 'yaml']);
      const { client, server, defaultTeam } = ctx.connect();
      const me = await client.get<Whoami>('/v1/whoami');
      const m = machine(format, me);
      if (m !== undefined) return ctx.out(m);
      ctx.out(`${describeCaller(me)} at ${server}${defaultTeam !== undefined ? `; default team ${defaultTeam}` : ''}\n`);
    });
}
