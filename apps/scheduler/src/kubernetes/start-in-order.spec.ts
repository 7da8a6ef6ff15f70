import { describe, expect, it } from '@jest/globals';
import { startInOrder, type Startable } from './start-in-order.js';

/** A component that writes what happens to it into `log`; `failStart`/`failStop` make that step throw. */
function component(name: string, log: string[], options: { failStart?: boolean; failStop?: boolean; async?: boolean } = {}): Startable {
  const step = (what: 'start' | 'stop', fail: boolean | undefined) => {
    log.push(`${what} ${name}`);
    if (fail) throw new Error(`${name} failed to ${what}`);
  };
  return options.async
    ? { start: () => Promise.resolve().then(() => step('start', options.failStart)), stop: () => Promise.resolve().then(() => step('stop', options.failStop)) }
    : { start: () => step('start', options.failStart), stop: () => step('stop', options.failStop) };
}

describe('startInOrder', () => {
  it('starts every component in order, and stops none, when all start', async () => {
    const log: string[] = [];
    await startInOrder([component('namespaces', log), component('pods', log, { async: true }), component('nodes', log)]);
    expect(log).toEqual(['start namespaces', 'start pods', 'start nodes']);
  });

  it('on a failed start, stops the components already started in reverse order, starts none after it, and rethrows its error', async () => {
    const log: string[] = [];
    const run = startInOrder([
      component('publisher', log),
      component('namespaces', log, { async: true }),
      component('pods', log),
      component('nodes', log, { failStart: true, async: true }),
      component('importer', log),
    ]);
    await expect(run).rejects.toThrow('nodes failed to start');
    expect(log).toEqual(['start publisher', 'start namespaces', 'start pods', 'start nodes', 'stop pods', 'stop namespaces', 'stop publisher']);
  });

  it('stops every started component though one of them fails to stop, reports that failure, and rethrows the start error', async () => {
    const log: string[] = [];
    const stopErrors: string[] = [];
    const run = startInOrder(
      [component('publisher', log), component('pods', log, { failStop: true }), component('nodes', log, { failStart: true })],
      (error) => stopErrors.push((error as Error).message),
    );
    await expect(run).rejects.toThrow('nodes failed to start');
    expect(log).toEqual(['start publisher', 'start pods', 'start nodes', 'stop pods', 'stop publisher']);
    expect(stopErrors).toEqual(['pods failed to stop']);
  });

  it('stops nothing when the first component fails to start', async () => {
    const log: string[] = [];
    await expect(startInOrder([component('check', log, { failStart: true }), component('pods', log)])).rejects.toThrow('check failed to start');
    expect(log).toEqual(['start check']);
  });
});
