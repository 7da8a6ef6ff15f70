import { type Command, Help, type Option } from 'commander';

/**
 * The command tree as the completion scripts see it: every visible command path, its options, the values
 * offered after them, and which arguments and option values name objects of the API (completed dynamically,
 * by `qm __complete`).
 */
export interface Node {
  /** `''` for qm itself, `quota set` for a nested command. */
  path: string;
  cmd: Command;
}

/** The commands `cmd` shows in its help (not hidden ones such as `__complete`, nor the implicit `help`). */
export const visibleChildren = (cmd: Command): Command[] => new Help().visibleCommands(cmd).filter((c) => cmd.commands.includes(c));

export function walk(cmd: Command, path = ''): Node[] {
  const here: Node = { path, cmd };
  return [here, ...visibleChildren(cmd).flatMap((c) => [c.name(), ...c.aliases()].map((name) => ({ name, c }))).flatMap(({ name, c }) => walk(c, path === '' ? name : `${path} ${name}`))];
}

export const visible = (cmd: Command): readonly Option[] => cmd.options.filter((o) => !o.hidden);
export const flags = (o: Option): string[] => [o.short, o.long].filter((f): f is string => f !== undefined);
export const takesValue = (o: Option): boolean => o.required || o.optional;
/** Values offered after an option: its choices, or the `a | b | c` list its description starts with. */
export function values(o: Option): string[] {
  if (o.argChoices && o.argChoices.length > 0) return o.argChoices;
  const m = /^([a-z][a-z-]*(?: \| [a-z][a-z-]*)+)/.exec(o.description);
  return m ? m[1]!.split(' | ') : [];
}
/** Options whose value is a file (not `--output`, whose value is a format, nor `--wait-timeout`). */
export const takesFile = (o: Option): boolean => /^--(file|trace-file|throughputs|cluster|tenancy|out|report)$/.test(o.long ?? '') || o.short === '-f';
/** Every flag that takes a value, in any command: the word after it is that value, not an argument. */
export const valueFlags = (nodes: Node[]): string[] => [...new Set(nodes.flatMap((n) => visible(n.cmd).filter(takesValue).flatMap(flags)))];
export const children = (cmd: Command): string[] => visibleChildren(cmd).flatMap((c) => [c.name(), ...c.aliases()]);

/** The kinds of names `qm __complete` asks the API for. */
export const NAME_KINDS = ['job', 'team', 'flavor', 'node', 'cohort'] as const;
export type NameKind = (typeof NAME_KINDS)[number];
const asKind = (word: string): NameKind | undefined => NAME_KINDS.find((k) => k === word || `${k}s` === word);

/** The value name of an option: `team` of `--team <team>`. */
const valueName = (o: Option): string => o.flags.replace(/^.*[<[]([^>\]]+)[>\]].*$/, '$1');

/** The kind of name an option's value is (`--team <team>`, `--flavor <flavors>`, `--cohort <cohort>`), if any. */
export const optionKind = (o: Option): NameKind | undefined => (takesValue(o) ? asKind(valueName(o)) : undefined);

/**
 * The kind of name each positional argument of a command is: `<job>`, `[job...]`, `<team>`, `<flavor>`, or
 * `<name>` of a command of the team, flavor, node and cohort groups (`qm team set <name>`).
 */
export function argumentKinds(n: Node): { kind: NameKind | undefined; variadic: boolean }[] {
  const [group] = n.path.split(' ');
  const nested = n.path.includes(' ');
  return n.cmd.registeredArguments.map((a) => ({
    kind: asKind(a.name()) ?? (a.name() === 'name' && nested ? asKind(group!) : undefined),
    variadic: a.variadic,
  }));
}
