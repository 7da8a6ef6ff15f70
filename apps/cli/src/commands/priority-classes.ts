import type { Command } from 'commander';
import type { List, PriorityClass } from '#api-client';
import type { CommandContext } from '../context.js';
import { UsageError } from '../errors.js';
import { machine, outputFormat } from '../output/render.js';
import { formatTable } from '../table.js';
import { example, noHeadersOption, seg } from './common.js';
import { current } from './tenancy-admin.js';

/** `qm priority-classes` (every token) and `qm priority-class set|rm` (admins): the classes members choose from. */
export function registerPriorityClasses(program: Command, ctx: CommandContext): void {
  noHeadersOption(
    program
      .command('priority-classes')
      .description('priority classes, highest first: what members choose with priorityClass in a job (up to their team\'s max-priority-class)')
      .option('-o, --output <format>', 'table | json | yaml'),
  )
    .addHelpText('after', example('qm priority-classes', 'qm priority-classes -o json', 'qm priority-classes --no-headers'))
    .action(async (opts: { output?: string; headers: boolean }) => {
      const format = outputFormat(opts.output, ['table', 'json', 'yaml']);
      const { items } = await ctx.connect().client.get<List<PriorityClass>>('/v1/priority-classes');
      const m = machine(format, items);
      if (m !== undefined) return ctx.out(m);
      if (items.length === 0) {
        const note = 'no priority classes: jobs run at priority 0 (an admin adds classes with qm priority-class set)';
        return opts.headers ? ctx.out(`${note}\n`) : ctx.warn(note);
      }
      ctx.out(formatTable(['NAME', 'VALUE', 'DEFAULT', 'DESCRIPTION'], items.map((c) => [c.name, String(c.value), c.default ? 'yes' : '-', c.description || '-']), { align: 'left', rule: false, headers: opts.headers }));
    });

  const pc = program.command('priority-class').description('create, change or delete a priority class (admin); list them with qm priority-classes');
  pc.addHelpText('after', example('qm priority-class set high --value 1000 --description "deadline-bound"', 'qm priority-class set standard --value 0 --default', 'qm priority-class rm high'));
  pc.command('set')
    .description('create a class, or change what is given (the rest keeps its value)')
    .argument('<name>')
    .option('--value <n>', 'its priority, -1000000 to 1000000 (higher goes first and may preempt lower)')
    .option('--description <text>', 'what it is for')
    .option('--default', 'make it the class of jobs that name none (taken from the class that had it)')
    .option('--no-default', 'no longer the default')
    .option('-o, --output <format>', 'text | json | yaml')
    .addHelpText('after', example('qm priority-class set high --value 1000 --description "deadline-bound"', 'qm priority-class set standard --value 0 --default'))
    .action(async (name: string, opts: { value?: string; description?: string; default?: boolean; output?: string }) => {
      const format = outputFormat(opts.output, ['text', 'json', 'yaml'], 'text');
      const client = ctx.connect().client;
      const was = await current<PriorityClass>(client, `/v1/priority-classes/${seg(name)}`);
      let value = was?.value;
      if (opts.value !== undefined) {
        if (!/^-?\d+$/.test(opts.value) || Math.abs(Number(opts.value)) > 1_000_000) throw new UsageError(`--value '${opts.value}': expected an integer from -1000000 to 1000000`);
        value = Number(opts.value);
      }
      if (value === undefined) throw new UsageError(`priority class ${name} does not exist yet: give its --value`);
      const body = { value, description: opts.description ?? was?.description ?? '', default: opts.default ?? was?.default ?? false };
      const saved = (await client.request<PriorityClass>('PUT', `/v1/priority-classes/${seg(name)}`, { body })).body;
      const m = machine(format, saved);
      if (m !== undefined) return ctx.out(m);
      ctx.out(`priority class ${name} ${was === undefined ? 'created' : 'updated'}: value ${saved.value}${saved.default ? ', the default' : ''}\n`);
    });
  pc.command('rm')
    .alias('delete')
    .description("delete a class (admin); refused while it is a team's max-priority-class; jobs keep their priority")
    .argument('<name>')
    .addHelpText('after', example('qm priority-class rm high'))
    .action(async (name: string) => {
      await ctx.connect().client.request('DELETE', `/v1/priority-classes/${seg(name)}`);
      ctx.out(`priority class ${name} deleted\n`);
    });
}
