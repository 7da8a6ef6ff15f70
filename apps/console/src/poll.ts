import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api';

/** How often pages refresh while visible. Each refresh is one or two indexed reads on the API. */
export const REFRESH_MS = 10_000;

export interface Polled<T> {
  data: T | null;
  error: ApiError | null;
  /** When the last successful load finished. */
  at: Date | null;
  loading: boolean;
  reload: () => void;
}

/**
 * Loads `load()` now and every `intervalMs` while the tab is visible (no requests from hidden tabs;
 * a refresh as soon as it is shown again). Keeps the last good data when a refresh fails.
 * `key` names the query: a change reloads at once. `intervalMs` null: load once.
 */
export function usePoll<T>(
  load: () => Promise<T>,
  key: string,
  intervalMs: number | null = REFRESH_MS,
): Polled<T> {
  const [state, setState] = useState<{
    data: T | null;
    error: ApiError | null;
    at: Date | null;
    loading: boolean;
  }>({
    data: null,
    error: null,
    at: null,
    loading: true,
  });
  const loadRef = useRef(load);
  loadRef.current = load;
  const generation = useRef(0);

  const run = useCallback(() => {
    const mine = ++generation.current;
    setState((s) => ({ ...s, loading: true }));
    loadRef.current().then(
      (data) => {
        if (mine === generation.current) setState({ data, error: null, at: new Date(), loading: false });
      },
      (error: unknown) => {
        if (mine !== generation.current) return;
        const e =
          error instanceof ApiError
            ? error
            : new ApiError(0, 'CLIENT', error instanceof Error ? error.message : String(error));
        setState((s) => ({ ...s, error: e, loading: false }));
      },
    );
  }, []);

  useEffect(() => {
    setState({ data: null, error: null, at: null, loading: true });
    run();
    if (intervalMs === null) return undefined;
    let timer: number | undefined;
    const schedule = (): void => {
      window.clearInterval(timer);
      if (document.visibilityState === 'visible') timer = window.setInterval(run, intervalMs);
    };
    const onVisibility = (): void => {
      if (document.visibilityState === 'visible') run();
      schedule();
    };
    schedule();
    document.addEventListener('visibilitychange', onVisibility);
    return () => {
      window.clearInterval(timer);
      document.removeEventListener('visibilitychange', onVisibility);
      generation.current++;
    };
  }, [key, intervalMs, run]);

  return { ...state, reload: run };
}
