import type { Command } from 'commander';
import type { ClusterNode, Cohort, Flavor, Job, List, Team, Whoami } from '#api-client';
import type { ApiClient } from '../client/api-client.js';
import { resolveConnection } from '../client/connection.js';
import type { CommandContext } from '../context.js';
import { example } from './common.js';
import { NAME_KINDS, type NameKind } from './completion-tree.js';

/** At most this many names per completion, and no longer than this for all its requests. */
export const COMPLETION_MAX_NAMES = 100;
export const COMPLETION_TIMEOUT_MS = 2000;

/**
 * The names of `kind` (but jobs: jobWords) the caller may see. Teams: every team, or, for a token that may not
 * list them (an executor), its own.
 */
async function names(client: ApiClient, kind: Exclude<NameKind, 'job'>, signal: AbortSignal): Promise<string[]> {
  const list = async <T extends { name: string }>(path: string): Promise<string[]> => (await client.get<List<T>>(path, undefined, signal)).items.map((i) => i.name);
  switch (kind) {
    case 'team':
      try {
        return await list<Team>('/v1/teams');
      } catch {
        return (await client.get<Whoami>('/v1/whoami', undefined, signal)).teams;
      }
    case 'flavor':
      return list<Flavor>('/v1/flavors');
    case 'node':
      return list<ClusterNode>('/v1/nodes');
    case 'cohort':
      return list<Cohort>('/v1/cohorts');
  }
}

/**
 * Names of the newest jobs of the default team (QM_TEAM or the config's, where `qm` looks a name up), else of
 * every team the token sees. Job ids are offered when the prefix matches no job name (`qm describe 3f2a<Tab>`);
 * `job/` is kept (`job/llama<Tab>`, as -o name prints them).
 */
async function jobWords(client: ApiClient, prefix: string, team: string | undefined, signal: AbortSignal): Promise<string[]> {
  const tagged = prefix.startsWith('job/');
  const bare = tagged ? prefix.slice('job/'.length) : prefix;
  const jobs = (await client.get<List<Job>>('/v1/jobs', { team, limit: COMPLETION_MAX_NAMES }, signal)).items;
  let words = jobs.map((j) => j.name).filter((n) => n.startsWith(bare));
  if (words.length === 0) words = jobs.map((j) => j.id).filter((id) => id.startsWith(bare));
  return words.map((w) => (tagged ? `job/${w}` : w));
}

/**
 * `qm __complete KIND [PREFIX]` (hidden): the names the shell completion scripts offer, one a line, sorted,
 * at most COMPLETION_MAX_NAMES. Silent and exit 0 whatever happens — not logged in, the API down or slow
 * (COMPLETION_TIMEOUT_MS for everything), refused, an unknown kind: a completion never prints an error nor hangs.
 */
export function registerCompletionNames(program: Command, ctx: CommandContext): void {
  program
    .command('__complete', { hidden: true })
    .description('names for the shell completion scripts: KIND is job, team, flavor, node or cohort')
    .argument('[kind]')
    .argument('[prefix]')
    .allowUnknownOption()
    .allowExcessArguments()
    .addHelpText('after', example('qm __complete job llama'))
    .action(async (kind: string | undefined, prefix: string | undefined) => {
      const k = NAME_KINDS.find((n) => n === kind);
      if (k === undefined) return;
      const start = prefix ?? '';
      try {
        const { client, defaultTeam } = resolveConnection(ctx.flags, ctx.io.env, () => undefined);
        const signal = AbortSignal.timeout(COMPLETION_TIMEOUT_MS);
        const found = k === 'job' ? await jobWords(client, start, defaultTeam, signal) : (await names(client, k, signal)).filter((n) => n.startsWith(start));
        const words = [...new Set(found)].sort().slice(0, COMPLETION_MAX_NAMES);
        if (words.length > 0) ctx.out(`${words.join('\n')}\n`);
      } catch {
        // Nothing: a completion that cannot ask offers no names.
      }
    });
}
