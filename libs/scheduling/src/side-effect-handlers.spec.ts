import { describe, expect, it } from '@jest/globals';
import { parseSideEffectPayload, SIDE_EFFECT_NAMES } from './side-effect-catalogue.js';
import { HandlerCatalogueError, SideEffectHandlerRegistry, standaloneHandlers, type AnySideEffectHandler } from './side-effect-handlers.js';

const ok = (): Promise<void> => Promise.resolve();

describe('SideEffectHandlerRegistry.create (start-up check)', () => {
  it('accepts exactly one handler per catalogue name', () => {
    const registry = SideEffectHandlerRegistry.create(standaloneHandlers());
    expect(registry.names().sort()).toEqual([...SIDE_EFFECT_NAMES].sort());
  });

  it('names every missing handler', () => {
    const handlers: AnySideEffectHandler[] = [{ name: 'bind', handle: ok }];
    expect(() => SideEffectHandlerRegistry.create(handlers)).toThrow(HandlerCatalogueError);
    expect(() => SideEffectHandlerRegistry.create(handlers)).toThrow(/no handler for "evict".*no handler for "delete".*no handler for "notify"/);
  });

  it('rejects two handlers for one name', () => {
    const handlers = [...standaloneHandlers(), { name: 'evict', handle: ok } as AnySideEffectHandler];
    expect(() => SideEffectHandlerRegistry.create(handlers)).toThrow(/more than one handler for "evict"/);
  });

  it('rejects a handler for a name outside the catalogue', () => {
    const handlers = [...standaloneHandlers(), { name: 'reboot', handle: ok } as unknown as AnySideEffectHandler];
    expect(() => SideEffectHandlerRegistry.create(handlers)).toThrow(/unknown job name "reboot"/);
  });
});

describe('parseSideEffectPayload', () => {
  it('returns a payload that names a job', () => {
    expect(parseSideEffectPayload('bind', { jobId: 'j1' })).toEqual({ jobId: 'j1' });
  });

  it.each([null, 'j1', {}, { jobId: '' }, { jobId: 7 }])('rejects %p', (raw) => {
    expect(() => parseSideEffectPayload('evict', raw)).toThrow(/evict payload/);
  });
});
