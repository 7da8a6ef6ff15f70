import { SIDE_EFFECT_NAMES, type SideEffectName, type SideEffectPayloads } from './side-effect-catalogue.js';

/** Passed to every handler. */
export interface SideEffectContext {
  /** The outbox entry being carried out (also the BullMQ job id). */
  outboxId: string;
  /** 1-based delivery attempt. */
  attempt: number;
}

/**
 * One handler per catalogue name. Handlers must be idempotent: they re-read the job they are given and
 * do nothing when the effect is already in place (pod already bound, already evicted, already gone).
 * Throwing retries the entry with exponential backoff; throwing `PermanentSideEffectError` stops retries.
 *
 * Kubernetes mode plugs in handlers from libs/kube for `bind`, `evict` and `delete`.
 */
export interface SideEffectHandler<N extends SideEffectName = SideEffectName> {
  readonly name: N;
  handle(payload: SideEffectPayloads[N], context: SideEffectContext): Promise<void>;
  /** Releases what the handler holds (a watch, say) when its worker closes. */
  close?(): Promise<void>;
}

/** Any handler of the catalogue (a union, so an array may mix names). */
export type AnySideEffectHandler = { [N in SideEffectName]: SideEffectHandler<N> }[SideEffectName];

export class PermanentSideEffectError extends Error {
  readonly code = 'SIDE_EFFECT_PERMANENT' as const;
}

/**
 * The effect cannot happen yet, and no attempt failed: it waits for something another actor does (a workload's
 * controller creating its pods). The worker looks again soon — after 50 ms, doubling to every 250 ms, and every 2 s
 * once it has waited ~30 s (notReadyDelayMs) — without spending one of the queue's attempts, so a wait of seconds is not turned into
 * the exponential backoff of a failing call (and, after the attempts, the outbox's slow retry of 30 s and more).
 * The handler is idempotent and re-reads its job each time: a job that moved on ends the wait.
 */
export class NotReadyYetError extends Error {
  readonly code = 'SIDE_EFFECT_NOT_READY' as const;
}

export class HandlerCatalogueError extends Error {
  readonly code = 'HANDLER_CATALOGUE_INVALID' as const;
}

/** Handlers indexed by name, built only when every name has exactly one handler. */
export class SideEffectHandlerRegistry {
  private constructor(private readonly byName: ReadonlyMap<SideEffectName, AnySideEffectHandler>) {}

  /**
   * The start-up check: every catalogue name has exactly one handler, and no handler has an unknown name.
   * Throws HandlerCatalogueError listing every problem at once.
   */
  static create(handlers: readonly AnySideEffectHandler[]): SideEffectHandlerRegistry {
    const problems: string[] = [];
    const byName = new Map<SideEffectName, AnySideEffectHandler>();
    for (const handler of handlers) {
      if (!(SIDE_EFFECT_NAMES as readonly string[]).includes(handler.name)) {
        problems.push(`handler for unknown job name "${String(handler.name)}"`);
      } else if (byName.has(handler.name)) {
        problems.push(`more than one handler for "${handler.name}"`);
      } else {
        byName.set(handler.name, handler);
      }
    }
    for (const name of SIDE_EFFECT_NAMES) if (!byName.has(name)) problems.push(`no handler for "${name}"`);
    if (problems.length > 0) throw new HandlerCatalogueError(`side-effect handlers are invalid: ${problems.join('; ')}`);
    return new SideEffectHandlerRegistry(byName);
  }

  /** Closes every handler that holds something (SideEffectHandler.close). */
  async close(): Promise<void> {
    await Promise.all([...this.byName.values()].map((handler) => (handler.close ? handler.close() : Promise.resolve())));
  }

  get<N extends SideEffectName>(name: N): SideEffectHandler<N> {
    const handler = this.byName.get(name);
    if (!handler) throw new HandlerCatalogueError(`no handler for "${name}"`);
    return handler as unknown as SideEffectHandler<N>;
  }

  names(): SideEffectName[] {
    return [...this.byName.keys()];
  }
}

/**
 * Standalone mode (no Kubernetes): admission itself is the side effect. An external executor learns of
 * it through the API and reports RUNNING/SUCCEEDED/FAILED; every handler only acknowledges the entry
 * (the caller marks it done after the handler returns).
 */
export function standaloneHandlers(): AnySideEffectHandler[] {
  const acknowledge = (): Promise<void> => Promise.resolve();
  return [
    { name: 'bind', handle: acknowledge },
    { name: 'evict', handle: acknowledge },
    { name: 'delete', handle: acknowledge },
    { name: 'notify', handle: acknowledge },
  ];
}
