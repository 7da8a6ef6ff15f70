/** A part of a process that is started at start-up and stopped at shutdown. */
export interface Startable {
  start(): Promise<void> | void;
  stop(): Promise<void> | void;
}

/**
 * Starts `components` one after another, each once the one before it has started. When one fails to start, the
 * ones already started are stopped in reverse order — every one of them, even when a stop fails (`onStopError`
 * hears of it) — and the start's error is rethrown: a failed start-up leaves nothing running.
 */
export async function startInOrder(components: readonly Startable[], onStopError: (error: unknown) => void = () => undefined): Promise<void> {
  const started: Startable[] = [];
  for (const component of components) {
    try {
      await component.start();
    } catch (error) {
      for (const done of started.reverse()) {
        try {
          await done.stop();
        } catch (stopError) {
          onStopError(stopError);
        }
      }
      throw error;
    }
    started.push(component);
  }
}
