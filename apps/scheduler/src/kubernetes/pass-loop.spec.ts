import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { pino } from 'pino';
import { PassLoop } from './pass-loop.js';
import { mayBeOurs } from './unbound-pods.js';

const silent = pino({ level: 'silent' });

/** A pass that resolves when the test says so, counting how often it started. */
function controlledPass(): { pass: () => Promise<void>; started: () => number; finish: () => void } {
  let started = 0;
  let release: (() => void) | null = null;
  return {
    pass: () => {
      started++;
      return new Promise<void>((resolve) => (release = resolve));
    },
    started: () => started,
    finish: () => {
      const r = release;
      release = null;
      r?.();
    },
  };
}

describe('PassLoop', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('a burst of nudges runs one pass after the nudge delay, long before the interval', async () => {
    const p = controlledPass();
    const passes = new PassLoop(p.pass, 1000, silent, 'failed', 50);
    passes.start();
    for (let i = 0; i < 8; i++) passes.nudge();
    await jest.advanceTimersByTimeAsync(49);
    expect(p.started()).toBe(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(p.started()).toBe(1);
    p.finish();
    await jest.advanceTimersByTimeAsync(500);
    expect(p.started()).toBe(1);
    await jest.advanceTimersByTimeAsync(500); // the interval's tick
    expect(p.started()).toBe(2);
    p.finish();
    await passes.stop();
  });

  it('a nudge while a pass runs queues exactly one more, after it (passes never overlap)', async () => {
    const p = controlledPass();
    const passes = new PassLoop(p.pass, 10_000, silent, 'failed', 10);
    passes.start();
    passes.nudge();
    await jest.advanceTimersByTimeAsync(10);
    expect(p.started()).toBe(1);
    passes.nudge();
    await jest.advanceTimersByTimeAsync(10);
    passes.nudge();
    await jest.advanceTimersByTimeAsync(10);
    expect(p.started()).toBe(1); // still running: the second waits
    p.finish();
    await jest.advanceTimersByTimeAsync(0);
    expect(p.started()).toBe(2);
    p.finish();
    await jest.advanceTimersByTimeAsync(100);
    expect(p.started()).toBe(2);
    await passes.stop();
  });

  it('passes off (interval 0): nudges run nothing', async () => {
    const p = controlledPass();
    const passes = new PassLoop(p.pass, 0, silent, 'failed', 10);
    passes.start();
    passes.nudge();
    await jest.advanceTimersByTimeAsync(1000);
    expect(p.started()).toBe(0);
    await passes.stop();
  });

  it('request runs a pass at once, with the interval off too, coalesced while one waits; nothing once stopped', async () => {
    const p = controlledPass();
    const passes = new PassLoop(p.pass, 0, silent, 'failed', 10);
    passes.start();
    passes.request();
    passes.request();
    await jest.advanceTimersByTimeAsync(0);
    expect(p.started()).toBe(1);
    passes.request(); // while it runs: one more after it
    passes.request();
    p.finish();
    await jest.advanceTimersByTimeAsync(0);
    expect(p.started()).toBe(2);
    p.finish();
    await passes.stop();
    passes.request();
    await jest.advanceTimersByTimeAsync(100);
    expect(p.started()).toBe(2);
  });

  it('stop waits for the pass in flight and runs no queued one', async () => {
    const p = controlledPass();
    const passes = new PassLoop(p.pass, 10_000, silent, 'failed', 10);
    passes.start();
    passes.nudge();
    await jest.advanceTimersByTimeAsync(10);
    passes.nudge();
    await jest.advanceTimersByTimeAsync(10);
    let stopped = false;
    const stopping = passes.stop().then(() => (stopped = true));
    await jest.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    p.finish();
    await stopping;
    expect(p.started()).toBe(1);
  });

  it('a failed pass is logged and the next one still runs', async () => {
    let calls = 0;
    const passes = new PassLoop(() => (calls++ === 0 ? Promise.reject(new Error('apiserver down')) : Promise.resolve()), 10_000, silent, 'failed', 10);
    passes.start();
    passes.nudge();
    await jest.advanceTimersByTimeAsync(10);
    passes.nudge();
    await jest.advanceTimersByTimeAsync(10);
    expect(calls).toBe(2);
    await passes.stop();
  });
});

describe('mayBeOurs', () => {
  const pod = (spec: Record<string, unknown>): Parameters<typeof mayBeOurs>[0] => ({ spec: { containers: [], ...spec } });
  it('names our scheduler, or asks for an extended resource; bound pods and plain pods of other schedulers are not', () => {
    expect(mayBeOurs(pod({ schedulerName: 'quartermaster' }), 'quartermaster')).toBe(true);
    expect(mayBeOurs(pod({ containers: [{ name: 'c', resources: { limits: { 'nvidia.com/gpu': '1' } } }] }), 'quartermaster')).toBe(true);
    expect(mayBeOurs(pod({ containers: [{ name: 'c', resources: { requests: { cpu: '1', memory: '1Gi' } } }] }), 'quartermaster')).toBe(false);
    expect(mayBeOurs(pod({ schedulerName: 'quartermaster', nodeName: 'n1' }), 'quartermaster')).toBe(false);
  });
});
