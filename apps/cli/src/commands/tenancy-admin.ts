import type { Command } from 'commander';
import { ApiError, type ApiClient } from '../client/api-client.js';
import type { ClusterNode, Cohort, Flavor, List, Price, Team, TopologyLevelName } from '#api-client';
import { age, localDateTime } from '../output/time.js';
import type { CommandContext } from '../context.js';
import { UsageError } from '../errors.js';
import { machine, outputFormat } from '../output/render.js';
import { formatTable } from '../table.js';
import { example, limitValue, listingFrame, noHeadersOption, positiveInt, printFrame, seg } from './common.js';

const listing = { align: 'left', rule: false } as const;
const KINDS = ['nvidia-gpu', 'aws-trainium', 'intel-gaudi', 'google-tpu'] as const;
const WITHIN_TEAM = ['Never', 'LowerPriority', 'LowerOrNewerEqualPriority'] as const;
const RECLAIM = ['Never', 'LowerPriority', 'Any'] as const;
const NONE = /^(none|null|-)$/i;

type PolicyField = keyof Team['podPolicy'];
/** `qm team set` flags of the team's pod policy: flag, field, what it lists. */
const POLICY_FLAGS: ReadonlyArray<readonly [string, PolicyField, string]> = [
  ['--allow-service-accounts', 'serviceAccounts', 'ServiceAccounts'],
  ['--allow-secrets', 'secrets', 'Secrets'],
  ['--allow-config-maps', 'configMaps', 'ConfigMaps'],
  ['--allow-pvcs', 'persistentVolumeClaims', 'PVCs'],
  ['--allow-nfs-servers', 'nfsServers', 'NFS servers'],
  ['--allow-tolerations', 'tolerations', 'tolerated taint keys'],
];

/** `a,b,c` as distinct names; an empty one is a usage error naming the flag. */
function commaList(flag: string, raw: string): string[] {
  const names = raw.split(',').map((n) => n.trim());
  if (names.some((n) => n === '')) throw new UsageError(`${flag} '${raw}': expected comma-separated names, or none`);
  return [...new Set(names)];
}

const camel = (flag: string): string => flag.replace(/^--/, '').replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());

/** The pod-policy lists the flags give (each replaces the team's list; `none` empties it), or undefined when none is given. */
function podPolicyChange(opts: Record<string, string | undefined>): Record<string, string[]> | undefined {
  const change: Record<string, string[]> = {};
  for (const [flag, field] of POLICY_FLAGS) {
    const raw = opts[camel(flag)];
    if (raw === undefined) continue;
    change[field] = NONE.test(raw.trim()) ? [] : commaList(flag, raw);
  }
  return Object.keys(change).length === 0 ? undefined : change;
}

/** The object at `path`, or undefined when the API answers 404. */
export async function current<T>(client: ApiClient, path: string): Promise<T | undefined> {
  try {
    return await client.get<T>(path);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return undefined;
    throw error;
  }
}

function oneOf<T extends string>(flag: string, value: string, allowed: readonly T[]): T {
  const hit = allowed.find((a) => a.toLowerCase() === value.toLowerCase());
  if (hit === undefined) throw new UsageError(`${flag} '${value}': expected one of ${allowed.join(', ')}`);
  return hit;
}

function nonNegative(flag: string, text: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n < 0) throw new UsageError(`${flag} '${text}': expected a non-negative number`);
  return n;
}

function wholeNumber(flag: string, text: string): number {
  const n = limitValue(flag, text);
  if (n === null) throw new UsageError(`${flag} '${text}': expected a non-negative integer`);
  return n;
}

function yesNo(flag: string, text: string): boolean {
  if (/^(yes|true|y|1)$/i.test(text)) return true;
  if (/^(no|false|n|0)$/i.test(text)) return false;
  throw new UsageError(`${flag} '${text}': expected yes or no`);
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

function labels(pairs: string[], flag = '--node-label'): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`${flag} '${pair}': expected key=value, e.g. nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3`);
    out[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return out;
}

const TOPOLOGY_LEVELS: readonly TopologyLevelName[] = ['zone', 'block', 'domain', 'tpuShape'];

/**
 * `--topology-label level=key` pairs: the node label key a topology level is read from; `level=default`
 * gives the level back to the kind's default. Returns the keys to set and the levels to reset.
 */
function topologyLabels(pairs: string[]): { set: Partial<Record<TopologyLevelName, string>>; reset: TopologyLevelName[] } {
  const set: Partial<Record<TopologyLevelName, string>> = {};
  const reset: TopologyLevelName[] = [];
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    const level = at <= 0 ? undefined : TOPOLOGY_LEVELS.find((l) => l.toLowerCase() === pair.slice(0, at).replace(/-/g, '').toLowerCase());
    if (level === undefined) {
      throw new UsageError(`--topology-label '${pair}': expected level=key with level one of ${TOPOLOGY_LEVELS.join(', ')}, e.g. domain=cloud.google.com/gke-nodepool`);
    }
    const key = pair.slice(at + 1).trim();
    if (key === '') throw new UsageError(`--topology-label '${pair}': give a node label key, or default for the kind's`);
    if (key === 'default') reset.push(level);
    else set[level] = key;
  }
  return { set, reset };
}

/** `qm X rm NAME`: DELETE, one line on success; 409 (still in use) and 404 come back as one-line errors, exit 1. */
function registerRemove(parent: Command, ctx: CommandContext, what: string, path: string, example_: string, description: string): void {
  parent
    .command('rm')
    .alias('delete')
    .description(description)
    .argument('<name>')
    .addHelpText('after', example(example_))
    .action(async (name: string) => {
      await ctx.connect().client.request('DELETE', `${path}/${seg(name)}`);
      ctx.out(`${what} ${name} deleted\n`);
    });
}

/**
 * Infra leads' writes of the tenancy: flavors, cohorts, teams and nodes (`set` creates or changes, keeping
 * what is not given; `rm` deletes, refused while in use). Quotas and budgets live in tenancy.ts and accounting.ts.
 */
export function registerTenancyAdmin(program: Command, ctx: CommandContext): void {
  // --- flavors ---------------------------------------------------------------------------------------
  const flavor = program.command('flavor').description('create, change or delete an accelerator flavor (admin); list them with qm flavors');
  flavor.addHelpText('after', example('qm flavor set h100-80gb --kind nvidia-gpu --memory-gib 80 --relative-speed 2 --cost-per-hour 4', 'qm flavor rm v100'));
  flavor
    .command('set')
    .description('create a flavor, or change the settings given (the others keep their value; a price change starts a new price in the history)')
    .argument('<name>')
    .option('--kind <kind>', 'nvidia-gpu | aws-trainium | intel-gaudi | google-tpu (required for a new flavor)')
    .option('--resource-name <name>', 'extended resource it is counted in (default by kind: nvidia.com/gpu, aws.amazon.com/neuron, habana.ai/gaudi, google.com/tpu)')
    .option('--node-label <key=value>', 'a node label that selects it; repeat for several (replaces the current labels)', collect)
    .option(
      '--topology-label <level=key>',
      "the node label key a topology level (zone, block, domain, tpuShape) is read from; level=default for the kind's default; repeat for several (the levels not given keep theirs)",
      collect,
    )
    .option('--memory-gib <n>', 'accelerator memory in GiB; none to clear')
    .option('--relative-speed <x>', 'speed relative to the others (1 = baseline)')
    .option('--cost-per-hour <x>', 'price of one accelerator-hour (the unit of currency budgets)')
    .option('-o, --output <format>', 'text | json | yaml')
    .addHelpText(
      'after',
      example(
        'qm flavor set h100-80gb --kind nvidia-gpu --node-label nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3 --memory-gib 80 --cost-per-hour 4',
        'qm flavor set h100-80gb --cost-per-hour 3.5',
        'qm flavor set v5p --kind google-tpu --topology-label domain=cloud.google.com/gke-nodepool --topology-label tpuShape=cloud.google.com/gke-tpu-topology',
      ),
    )
    .action(async (name: string, opts: { kind?: string; resourceName?: string; nodeLabel?: string[]; topologyLabel?: string[]; memoryGib?: string; relativeSpeed?: string; costPerHour?: string; output?: string }) => {
      const format = outputFormat(opts.output, ['text', 'json', 'yaml'], 'text');
      const kind = opts.kind === undefined ? undefined : oneOf('--kind', opts.kind, KINDS);
      const memoryGiB = opts.memoryGib === undefined ? undefined : NONE.test(opts.memoryGib) ? null : wholeNumber('--memory-gib', opts.memoryGib);
      const relativeSpeed = opts.relativeSpeed === undefined ? undefined : nonNegative('--relative-speed', opts.relativeSpeed);
      const costPerHour = opts.costPerHour === undefined ? undefined : nonNegative('--cost-per-hour', opts.costPerHour);
      const nodeLabels = opts.nodeLabel === undefined ? undefined : labels(opts.nodeLabel);
      const topology = opts.topologyLabel === undefined ? undefined : topologyLabels(opts.topologyLabel);
      const client = ctx.connect().client;
      const was = await current<Flavor>(client, `/v1/flavors/${seg(name)}`);
      if (was === undefined && kind === undefined) throw new UsageError(`flavor ${name} does not exist yet: --kind is required (${KINDS.join(', ')})`);
      if (was !== undefined && [kind, opts.resourceName, nodeLabels, topology, memoryGiB, relativeSpeed, costPerHour].every((v) => v === undefined)) {
        throw new UsageError('give at least one setting to change (see qm flavor set --help)');
      }
      const sameKind = was !== undefined && (kind === undefined || kind === was.kind);
      // The PUT replaces the flavor: its topology label keys are sent back as they are (a new kind starts from its
      // own defaults), with the levels given changed and those reset left out (the kind's default then).
      const topologyKeys: Partial<Record<TopologyLevelName, string>> = { ...(sameKind ? (was.topologyLabels ?? {}) : {}), ...(topology?.set ?? {}) };
      for (const level of topology?.reset ?? []) delete topologyKeys[level];
      const body = {
        kind: kind ?? was!.kind,
        // A new kind takes its own default resource unless one is given.
        ...(opts.resourceName !== undefined ? { resourceName: opts.resourceName } : sameKind ? { resourceName: was.resourceName } : {}),
        nodeLabels: nodeLabels ?? was?.nodeLabels ?? {},
        topologyLabels: topologyKeys,
        memoryGiB: memoryGiB !== undefined ? memoryGiB : (was?.memoryGiB ?? null),
        relativeSpeed: relativeSpeed ?? was?.relativeSpeed ?? 1,
        costPerHour: costPerHour ?? was?.costPerHour ?? 0,
      };
      const saved = (await client.request<Flavor>('PUT', `/v1/flavors/${seg(name)}`, { body })).body;
      const m = machine(format, saved);
      if (m !== undefined) return ctx.out(m);
      ctx.out(
        `flavor ${name} ${was === undefined ? 'created' : 'updated'}: ${saved.kind} (${saved.resourceName}), ` +
          `${saved.memoryGiB === null ? 'memory unknown' : `${saved.memoryGiB} GiB`}, speed ${saved.relativeSpeed}, ${saved.costPerHour} per accelerator-hour\n` +
          (topology === undefined ? '' : `topology from node labels: ${TOPOLOGY_LEVELS.filter((l) => saved.topologyLabels?.[l]).map((l) => `${l} ${saved.topologyLabels[l]}`).join(', ')}\n`),
      );
    });
  noHeadersOption(
    flavor
      .command('prices')
      .description("a flavor's price history, oldest first: each cost per accelerator-hour and when it took effect (kept after the flavor is deleted)")
      .argument('<name>')
      .option('-o, --output <format>', 'table | json | yaml'),
  )
    .addHelpText('after', example('qm flavor prices h100-80gb', 'qm flavor prices h100-80gb -o json'))
    .action(async (name: string, opts: { output?: string; headers: boolean }) => {
      const format = outputFormat(opts.output, ['table', 'json', 'yaml']);
      const { items } = await ctx.connect().client.get<List<Price>>(`/v1/flavors/${seg(name)}/prices`);
      const m = machine(format, items);
      if (m !== undefined) {
        ctx.out(m);
        return;
      }
      const now = ctx.now();
      const rows = items.map((p, i) => {
        const from = Date.parse(p.effectiveFrom);
        const until = items[i + 1];
        return [localDateTime(from, { timeZone: ctx.timeZone }), String(p.costPerHour), until === undefined ? `in force (${age(from, now)})` : `until ${localDateTime(Date.parse(until.effectiveFrom), { timeZone: ctx.timeZone })}`];
      });
      ctx.out(formatTable(['EFFECTIVE-FROM', 'COST/ACCEL-HOUR', 'PERIOD'], rows, { ...listing, headers: opts.headers }));
    });
  registerRemove(flavor, ctx, 'flavor', '/v1/flavors', 'qm flavor rm v100', 'delete a flavor (admin); refused while nodes, quotas or unfinished jobs use it');

  // --- cohorts ---------------------------------------------------------------------------------------
  noHeadersOption(
    program
      .command('cohorts')
      .description('cohorts (borrowing pools): members, and per flavor capacity (members\' nominal) and use')
      .option('-o, --output <format>', 'table | name | json | yaml (name: cohort/NAME, one a line)'),
  )
    .addHelpText('after', example('qm cohorts', 'qm cohorts -o json', 'qm cohorts -o name', 'qm cohorts --no-headers'))
    .action(async (opts: { output?: string; headers: boolean }) => {
      const format = outputFormat(opts.output, ['table', 'name', 'json', 'yaml']);
      const { items } = await ctx.connect().client.get<List<Cohort>>('/v1/cohorts');
      printFrame(ctx, listingFrame(format, items, 'cohort', () =>
        formatTable(
          ['NAME', 'MEMBERS', 'USED/CAPACITY', 'DESCRIPTION'],
          items.map((c) => [c.name, c.members.join(', ') || '-', c.flavors.map((f) => `${f.flavor} ${f.used}/${f.capacity}`).join(', ') || '-', c.description || '-']),
          { ...listing, headers: opts.headers },
        ),
      ));
    });
  const cohort = program.command('cohort').description('create, describe or delete a cohort, a pool teams borrow from (admin); list them with qm cohorts');
  cohort.addHelpText('after', example('qm cohort set research --description "research pool"', 'qm cohort rm research'));
  cohort
    .command('set')
    .description('create a cohort, or change its description')
    .argument('<name>')
    .option('--description <text>', 'what the pool is for')
    .option('-o, --output <format>', 'text | json | yaml')
    .addHelpText('after', example('qm cohort set research --description "research pool"'))
    .action(async (name: string, opts: { description?: string; output?: string }) => {
      const format = outputFormat(opts.output, ['text', 'json', 'yaml'], 'text');
      const client = ctx.connect().client;
      const was = await current<Cohort>(client, `/v1/cohorts/${seg(name)}`);
      const body = { description: opts.description ?? was?.description ?? '' };
      const saved = (await client.request<Cohort>('PUT', `/v1/cohorts/${seg(name)}`, { body })).body;
      const m = machine(format, saved);
      if (m !== undefined) return ctx.out(m);
      ctx.out(`cohort ${name} ${was === undefined ? 'created' : 'updated'}${saved.members.length > 0 ? ` (members: ${saved.members.join(', ')})` : ''}\n`);
    });
  registerRemove(cohort, ctx, 'cohort', '/v1/cohorts', 'qm cohort rm research', 'delete a cohort (admin); refused while teams are members (qm team set TEAM --cohort none)');

  // --- teams -----------------------------------------------------------------------------------------
  const team = program.command('team').description('create, change or delete a team (admin); list them with qm teams, set quotas with qm quota set');
  team.addHelpText('after', example('qm team set vision --cohort research --fair-share-weight 2', 'qm team rm legacy'));
  const teamSet = team
    .command('set')
    .description('create a team, or change the settings given (PATCH: the others keep their value)')
    .argument('<name>')
    .option('--cohort <cohort>', 'the cohort it borrows from and lends to; none to leave it')
    .option('--fair-share-weight <n>', 'its weight in fair sharing (1-1000)')
    .option('--within-team <policy>', 'Never | LowerPriority | LowerOrNewerEqualPriority — which of its own jobs a job may preempt')
    .option('--reclaim-within-cohort <policy>', 'Never | LowerPriority | Any — which borrowers it may preempt to get its nominal quota back')
    .option('--max-priority-class <class>', "the highest priority class its members may choose; none = up to the default class");
  teamSet.option('--namespaces <names>', "Kubernetes namespaces whose annotated pods and workloads may name the team, comma-separated; none = its own name");
  for (const [flag, , what] of POLICY_FLAGS) teamSet.option(`${flag} <names>`, `${what} its jobs' pod templates may reference, comma-separated ('*' any; none: no one); replaces that list`);
  teamSet
    .option('-o, --output <format>', 'text | json | yaml')
    .addHelpText(
      'after',
      example('qm team set vision --cohort research', 'qm team set vision --within-team Never', 'qm team set nlp --cohort none', 'qm team set vision --allow-service-accounts trainer --allow-secrets wandb-key,registry-creds'),
    )
    .action(async (name: string, opts: { cohort?: string; fairShareWeight?: string; withinTeam?: string; reclaimWithinCohort?: string; maxPriorityClass?: string; output?: string } & Record<string, string | undefined>) => {
      const format = outputFormat(opts.output, ['text', 'json', 'yaml'], 'text');
      const change: {
        cohort?: string | null;
        fairShareWeight?: number;
        maxPriorityClass?: string | null;
        preemption?: { withinTeam?: string; reclaimWithinCohort?: string };
        podPolicy?: Record<string, string[]>;
        namespaces?: string[] | null;
      } = {};
      if (opts['namespaces'] !== undefined) change.namespaces = NONE.test(opts['namespaces'].trim()) ? null : commaList('--namespaces', opts['namespaces']);
      const policy = podPolicyChange(opts);
      if (policy !== undefined) change.podPolicy = policy;
      if (opts.cohort !== undefined) change.cohort = NONE.test(opts.cohort) ? null : opts.cohort;
      if (opts.maxPriorityClass !== undefined) change.maxPriorityClass = NONE.test(opts.maxPriorityClass) ? null : opts.maxPriorityClass;
      if (opts.fairShareWeight !== undefined) change.fairShareWeight = positiveInt('--fair-share-weight', opts.fairShareWeight);
      if (opts.withinTeam !== undefined || opts.reclaimWithinCohort !== undefined) {
        change.preemption = {
          ...(opts.withinTeam !== undefined ? { withinTeam: oneOf('--within-team', opts.withinTeam, WITHIN_TEAM) } : {}),
          ...(opts.reclaimWithinCohort !== undefined ? { reclaimWithinCohort: oneOf('--reclaim-within-cohort', opts.reclaimWithinCohort, RECLAIM) } : {}),
        };
      }
      const client = ctx.connect().client;
      const was = await current<Team>(client, `/v1/teams/${seg(name)}`);
      if (was !== undefined && Object.keys(change).length === 0) throw new UsageError('give at least one setting to change (see qm team set --help)');
      const saved = (await client.request<Team>(was === undefined ? 'PUT' : 'PATCH', `/v1/teams/${seg(name)}`, { body: change })).body;
      const m = machine(format, saved);
      if (m !== undefined) return ctx.out(m);
      ctx.out(
        `team ${name} ${was === undefined ? 'created' : 'updated'}: cohort ${saved.cohort ?? 'none'}, fair-share weight ${saved.fairShareWeight}, ` +
          `preemption within team ${saved.preemption.withinTeam}, reclaim within cohort ${saved.preemption.reclaimWithinCohort}, ` +
          `highest priority class ${saved.maxPriorityClass ?? 'the default'}\n` +
          // The pod policy when it was changed or allows something (a new team's allows nothing).
          (policy !== undefined || Object.values(saved.podPolicy).some((list) => list.length > 0)
            ? `pod templates may reference: ${POLICY_FLAGS.map(([, field, what]) => `${what} ${saved.podPolicy[field].join(', ') || 'none'}`).join('; ')}\n`
            : '') +
          (change.namespaces !== undefined ? `takes workloads from namespaces: ${saved.namespaces.join(', ')}\n` : ''),
      );
    });
  registerRemove(team, ctx, 'team', '/v1/teams', 'qm team rm legacy', 'delete a team (admin) with its finished jobs (its usage stays in qm usage) and take it off every token; refused while it has unfinished jobs, quotas or budgets');

  // --- nodes -----------------------------------------------------------------------------------------
  const node = program.command('node').description('add, change or delete a node in a cluster without Kubernetes sync (admin); list them with qm nodes');
  node.addHelpText('after', example('qm node set gpu-1 --flavor h100-80gb --accelerators 8 --cpu-millis 96000 --memory-mib 1048576 --zone z1', 'qm node set gpu-1 --schedulable no', 'qm node drain gpu-1', 'qm node rm gpu-1'));
  node
    .command('set')
    .description('add a node, or change the settings given (the others keep their value); --schedulable no cordons it (running work stays)')
    .argument('<name>')
    .option('--flavor <flavor>', 'its accelerators\' flavor (required for a new node)')
    .option('--accelerators <n>', 'allocatable accelerators (required for a new node)')
    .option('--cpu-millis <n>', 'allocatable CPU in millicores (required for a new node)')
    .option('--memory-mib <n>', 'allocatable memory in MiB (required for a new node)')
    .option('--zone <zone>', 'topology zone; none to clear')
    .option('--block <block>', 'topology block or rack; none to clear')
    .option('--domain <domain>', 'NVLink/ICI domain; none to clear')
    .option('--tpu-shape <shape>', 'TPU slice shape such as 2x4; none to clear')
    .option('--schedulable <yes|no>', 'whether it takes new work')
    .option('--label <key=value>', "a node label (jobs' nodeSelector matches them); repeat for several (replaces the current labels)", collect)
    .option('-o, --output <format>', 'text | json | yaml')
    .addHelpText('after', example('qm node set gpu-1 --flavor h100-80gb --accelerators 8 --cpu-millis 96000 --memory-mib 1048576 --zone z1 --block b1', 'qm node set gpu-1 --schedulable no', 'qm node set gpu-1 --label pool=reserved'))
    .action(async (name: string, opts: Record<string, string | undefined> & { label?: string[] }) => {
      const format = outputFormat(opts['output'], ['text', 'json', 'yaml'], 'text');
      const int = (flag: string, key: string): number | undefined => (opts[key] === undefined ? undefined : wholeNumber(flag, opts[key]));
      const given = {
        flavor: opts['flavor'],
        accelerators: int('--accelerators', 'accelerators'),
        cpuMillis: int('--cpu-millis', 'cpuMillis'),
        memoryMiB: int('--memory-mib', 'memoryMib'),
        schedulable: opts['schedulable'] === undefined ? undefined : yesNo('--schedulable', opts['schedulable']),
      };
      const topologyFlags = { zone: opts['zone'], block: opts['block'], domain: opts['domain'], tpuShape: opts['tpuShape'] };
      const nodeLabels = opts.label === undefined ? undefined : labels(opts.label, '--label');
      const client = ctx.connect().client;
      const was = await current<ClusterNode>(client, `/v1/nodes/${seg(name)}`);
      if (was === undefined) {
        const missing = (['flavor', 'accelerators', 'cpuMillis', 'memoryMiB'] as const).filter((k) => given[k] === undefined);
        const flag = { flavor: '--flavor', accelerators: '--accelerators', cpuMillis: '--cpu-millis', memoryMiB: '--memory-mib' };
        if (missing.length > 0) throw new UsageError(`node ${name} does not exist yet: ${missing.map((k) => flag[k]).join(', ')} required`);
      } else if ([...Object.values(given), ...Object.values(topologyFlags), nodeLabels].every((v) => v === undefined)) {
        throw new UsageError('give at least one setting to change (see qm node set --help)');
      }
      const topology: Record<string, string> = { ...(was?.topology ?? {}) };
      for (const [key, value] of Object.entries(topologyFlags)) {
        if (value === undefined) continue;
        if (NONE.test(value)) delete topology[key];
        else topology[key] = value;
      }
      const body = {
        flavor: given.flavor ?? was!.flavor,
        accelerators: given.accelerators ?? was!.accelerators,
        cpuMillis: given.cpuMillis ?? was!.cpuMillis,
        memoryMiB: given.memoryMiB ?? was!.memoryMiB,
        topology,
        labels: nodeLabels ?? was?.labels ?? {},
        schedulable: given.schedulable ?? was?.schedulable ?? true,
      };
      const saved = (await client.request<ClusterNode>('PUT', `/v1/nodes/${seg(name)}`, { body })).body;
      const m = machine(format, saved);
      if (m !== undefined) return ctx.out(m);
      const where = Object.entries(saved.topology).map(([k, v]) => `${k} ${v}`).join(', ');
      ctx.out(
        `node ${name} ${was === undefined ? 'added' : 'updated'}: ${saved.accelerators} × ${saved.flavor}${where ? `, ${where}` : ''}, ` +
          `${saved.schedulable ? 'takes new work' : 'cordoned (takes no new work)'}\n`,
      );
    });
  node
    .command('drain')
    .description('cordon a node and requeue every job holding accelerators on it, each evicted with its checkpoint grace period (admin; nodes not synced from Kubernetes)')
    .argument('<name>')
    .option('--dry-run', 'list the jobs it would requeue, and change nothing')
    .addHelpText('after', example('qm node drain gpu-7 --dry-run', 'qm node drain gpu-7'))
    .action(async (name: string, opts: { dryRun?: boolean }) => {
      const client = ctx.connect().client;
      const r = (
        await client.request<{ node: string; cordoned: boolean; jobs: { id: string; name: string; team: string; from: string }[]; dryRun: boolean }>(
          'POST',
          `/v1/nodes/${seg(name)}/drain`,
          { body: opts.dryRun ? { dryRun: true } : {} },
        )
      ).body;
      const verb = r.dryRun ? 'would be requeued' : 'requeued';
      for (const j of r.jobs) ctx.out(`${j.id} ${j.team}/${j.name}: ${verb} (was ${j.from})\n`);
      const cordon = r.dryRun ? (r.cordoned ? 'would be cordoned' : 'is cordoned already') : r.cordoned ? 'cordoned' : 'was cordoned already';
      ctx.warn(`qm: node ${name} ${cordon}; ${r.jobs.length} job(s) ${verb}${r.dryRun ? ' (dry run: nothing changed)' : ''}`);
    });
  registerRemove(node, ctx, 'node', '/v1/nodes', 'qm node rm gpu-1', 'delete a node (admin); refused while jobs hold accelerators on it (cordon it with qm node set NAME --schedulable no and let them finish)');
}
