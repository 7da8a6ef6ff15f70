import type { ComponentChildren } from 'preact';
import type { ApiError } from '../api';
import { clock } from '../format';
import type { Polled } from '../poll';

/** An error the page could not load past, in words, with what to do. */
export function ErrorNote({ error }: { error: ApiError }) {
  const hint =
    error.status === 403
      ? 'Your token does not give access to this. Ask your infra lead if you need it.'
      : error.status === 404
        ? 'It may have been deleted, or the link is wrong.'
        : error.status === 0
          ? 'Check that the API is running and your network is up; the page retries by itself.'
          : '';
  return (
    <div class="note error" role="alert">
      <strong>{error.status === 0 ? 'Cannot reach the API.' : `Error ${error.status}.`}</strong>{' '}
      {error.detail} {hint}
    </div>
  );
}

/** "Updated 14:05:12 · refreshes every 10 s" and a Refresh button; keeps showing the last data on errors. */
export function Freshness({ polled, every }: { polled: Polled<unknown>; every?: string }) {
  return (
    <p class="freshness" aria-live="off">
      {polled.at ? `Updated ${clock(polled.at)}` : 'Loading…'}
      {every ? ` · refreshes every ${every} while this tab is open` : ''}{' '}
      <button type="button" class="link" onClick={polled.reload}>
        Refresh now
      </button>
    </p>
  );
}

/** Renders children once data are there; the error note above it when the last load failed. */
export function Loaded<T>({
  polled,
  children,
}: {
  polled: Polled<T>;
  children: (data: T) => ComponentChildren;
}) {
  return (
    <>
      {polled.error && <ErrorNote error={polled.error} />}
      {polled.data === null ? polled.error ? null : <p class="muted">Loading…</p> : children(polled.data)}
    </>
  );
}
