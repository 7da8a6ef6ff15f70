import { describe, expect, it } from '@jest/globals';
import { UsageError } from '../errors.js';
import { formatTable } from '../table.js';
import { inlineJob, splitCommand } from './inline-job.js';
import { watchInterval } from './watch.js';

describe('qm submit without a file', () => {
  it('splits --command like a shell: blanks, quotes, backslashes, no expansion', () => {
    expect(splitCommand('python train.py --lr 3e-4')).toEqual(['python', 'train.py', '--lr', '3e-4']);
    expect(splitCommand(`sh -c "echo 'hi there' \\"x\\""`)).toEqual(['sh', '-c', `echo 'hi there' "x"`]);
    expect(splitCommand(`printf '%s\\n' $HOME a\\ b ""`)).toEqual(['printf', '%s\\n', '$HOME', 'a b', '']);
    expect(() => splitCommand('python "train.py')).toThrow(UsageError);
  });

  it('builds the API shape from the flags; --gpus is per replica, replicas default to 1', () => {
    expect(inlineJob({ name: 'a', gpus: '8', image: 'img:1' }, [])).toEqual({ name: 'a', replicas: 1, acceleratorsPerReplica: 8, template: { image: 'img:1' } });
    expect(inlineJob({ name: 'a', gpus: '4', image: 'img', replicas: '2', flavor: ['h100-80gb,a100-80gb', 'h100-80gb'], kind: 'eval', runtime: '90m', priorityClass: 'high' }, ['python', 'x.py'])).toEqual({
      name: 'a',
      kind: 'eval',
      replicas: 2,
      acceleratorsPerReplica: 4,
      flavors: ['h100-80gb', 'a100-80gb'],
      priorityClass: 'high',
      expectedRuntimeSeconds: 5400,
      template: { image: 'img', command: ['python', 'x.py'] },
    });
  });

  it.each([
    [{ gpus: '8', image: 'x' }, 'a job without a file needs --name'],
    [{ name: 'a-', gpus: '8', image: 'x' }, "--name 'a-': must be a DNS-1123 label"],
    [{ name: 'a', gpus: '-1', image: 'x' }, "--gpus '-1': expected a whole number from 0 to 64"],
    [{ name: 'a', gpus: '1', image: 'a b' }, "--image 'a b': expected an image reference without blanks"],
    [{ name: 'a', gpus: '1', image: 'x', replicas: '10001' }, "--replicas '10001': expected a whole number from 1 to 10000"],
    [{ name: 'a', gpus: '1', image: 'x', flavor: [','] }, "--flavor ',': an empty flavor name"],
    [{ name: 'a', gpus: '1', image: 'x', runtime: '0s' }, "--runtime '0s': expected a duration"],
  ])('%j is refused: %s', (flags, message) => {
    expect(() => inlineJob(flags, [])).toThrow(message);
  });
});

describe('--watch --interval', () => {
  it('defaults to 2 s, takes seconds or a unit, refuses less than 1 s and --interval without --watch', () => {
    expect(watchInterval({})).toBeUndefined();
    expect(watchInterval({ watch: true })).toBe(2000);
    expect(watchInterval({ watch: true, interval: '1' })).toBe(1000);
    expect(watchInterval({ watch: true, interval: '1.5s' })).toBe(1500);
    expect(watchInterval({ watch: true, interval: '1m' })).toBe(60_000);
    expect(() => watchInterval({ watch: true, interval: '0.9' })).toThrow('must be at least 1 second');
    expect(() => watchInterval({ interval: '5' })).toThrow('--interval only applies with --watch (-w)');
  });
});

describe('--no-headers', () => {
  it('prints the rows alone, as wide as they need', () => {
    expect(formatTable(['NAME', 'VALUE'], [['a', '1'], ['bb', '22']], { align: 'left', rule: false })).toBe('NAME  VALUE\na     1\nbb    22\n');
    expect(formatTable(['NAME', 'VALUE'], [['a', '1'], ['bb', '22']], { align: 'left', rule: false, headers: false })).toBe('a   1\nbb  22\n');
    expect(formatTable(['NAME'], [], { headers: false })).toBe('');
  });
});
