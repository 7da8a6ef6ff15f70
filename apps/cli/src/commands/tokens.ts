import type { Command } from 'commander';
import type { List } from '#api-client';
import type { CommandContext } from '../context.js';
import { UsageError } from '../errors.js';
import { machine, outputFormat } from '../output/render.js';
import { localTime, parseTime } from '../output/time.js';
import { formatTable } from '../table.js';
import { example, noHeadersOption, seg } from './common.js';

const listing = { align: 'left', rule: false } as const;
const ROLES = ['member', 'executor', 'admin'] as const;

interface TokenInfo {
  id: string;
  subject: string;
  role: (typeof ROLES)[number];
  teams: string[];
  createdAt: string;
  revokedAt?: string | null;
}

/** Admins hand out tokens: researchers (member), executors outside Kubernetes (executor), other admins. */
export function registerTokens(program: Command, ctx: CommandContext): void {
  const token = program.command('token').description('API tokens (admin): create one for a researcher or an executor, list, revoke');
  token.addHelpText('after', example('qm token create alice --teams vision', 'qm token ls', 'qm token revoke 2f0c…'));

  token
    .command('create')
    .description('create a token for SUBJECT and print its secret (shown once: hand it over, it cannot be read again)')
    .argument('<subject>', 'who it is for (a person, or a service such as an executor)')
    .option('--role <role>', 'member | executor | admin', 'member')
    .option('--teams <teams>', 'comma-separated teams it acts for (required for member and executor)')
    .option('-o, --output <format>', 'token | json | yaml (token: only the secret, for scripts)')
    .addHelpText(
      'after',
      example('qm token create alice --teams vision,nlp', 'qm token create runner-1 --role executor --teams vision -o token > runner-1.token') +
        '\nThe researcher then runs: qm login --server URL --token - < the-token-file\n',
    )
    .action(async (subject: string, opts: { role: string; teams?: string; output?: string }) => {
      const role = ROLES.find((r) => r === opts.role.toLowerCase());
      if (role === undefined) throw new UsageError(`--role '${opts.role}': expected one of ${ROLES.join(', ')}`);
      const output = (opts.output ?? 'text').toLowerCase();
      if (!['text', 'token', 'json', 'yaml'].includes(output)) throw new UsageError(`-o ${opts.output}: expected one of token, json, yaml`);
      const format = output === 'token' ? 'id' : outputFormat(output, ['text', 'json', 'yaml'], 'text');
      const teams = (opts.teams ?? '').split(',').map((t) => t.trim()).filter((t) => t !== '');
      if (role !== 'admin' && teams.length === 0) throw new UsageError(`a ${role} token acts for teams: give --teams, e.g. --teams vision`);
      if (role === 'admin' && teams.length > 0) throw new UsageError('an admin token acts for every team: leave out --teams');
      const created = (await ctx.connect().client.request<TokenInfo & { token: string }>('POST', '/v1/tokens', { body: { subject, role, ...(teams.length > 0 ? { teams } : {}) } })).body;
      if (format === 'id') return ctx.out(`${created.token}\n`);
      const m = machine(format, created);
      if (m !== undefined) return ctx.out(m);
      ctx.out(
        `token ${created.id} for ${created.subject} (role ${created.role}${created.teams.length > 0 ? ` of ${created.teams.join(', ')}` : ': every team'}):\n` +
          `${created.token}\n` +
          `This secret is shown once. ${created.subject} logs in with: qm login --server ${ctx.connect().client.server} --token -\n`,
      );
    });

  noHeadersOption(
    token
      .command('ls')
      .description('every token without its secret: id, subject, role, teams, created, revoked')
      .option('-o, --output <format>', 'table | json | yaml'),
  )
    .addHelpText('after', example('qm token ls', 'qm token ls -o json', 'qm token ls --no-headers'))
    .action(async (opts: { output?: string; headers: boolean }) => {
      const format = outputFormat(opts.output, ['table', 'json', 'yaml']);
      const { items } = await ctx.connect().client.get<List<TokenInfo>>('/v1/tokens');
      const m = machine(format, items);
      if (m !== undefined) return ctx.out(m);
      if (items.length === 0) return ctx.warn('no tokens yet (the QM_ADMIN_TOKEN of the server is not listed)');
      const now = ctx.now();
      const when = (iso: string | null | undefined): string => {
        const t = parseTime(iso);
        return t === null ? '-' : localTime(t, now, { timeZone: ctx.timeZone });
      };
      ctx.out(
        formatTable(
          ['ID', 'SUBJECT', 'ROLE', 'TEAMS', 'CREATED', 'REVOKED'],
          items.map((t) => [t.id, t.subject, t.role, t.teams.join(',') || '-', when(t.createdAt), when(t.revokedAt)]),
          { ...listing, headers: opts.headers },
        ),
      );
    });

  token
    .command('revoke')
    .description('revoke tokens by id (every API replica refuses them within seconds); revoking twice is fine')
    .argument('<id...>')
    .addHelpText('after', example('qm token revoke 2f0c6a0e-…'))
    .action(async (ids: string[]) => {
      const client = ctx.connect().client;
      for (const id of ids) {
        await client.request('DELETE', `/v1/tokens/${seg(id)}`);
        ctx.out(`token ${id} revoked\n`);
      }
    });
}
