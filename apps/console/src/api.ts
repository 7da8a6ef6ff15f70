import { session } from './session';

/** A field the API rejected (problem+json `errors`). */
export interface FieldError {
  field: string;
  message: string;
}

/** An error answer of the API (RFC 9457 problem+json), or a network failure (status 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly errors: FieldError[] = [],
  ) {
    super(detail);
  }
}

/** Listeners told when the API refuses the session's token (401): the app signs out and says why. */
const unauthorized = new Set<(detail: string) => void>();
export function onUnauthorized(listener: (detail: string) => void): () => void {
  unauthorized.add(listener);
  return () => unauthorized.delete(listener);
}

/**
 * Calls the REST API of the same origin with the session's token in the Authorization header (never in
 * the URL). JSON in and out; an error answer becomes an ApiError carrying the problem's detail and fields.
 */
export async function api<T>(
  path: string,
  init: { method?: string; body?: unknown; token?: string } = {},
): Promise<T> {
  const token = init.token ?? session.token();
  const headers: Record<string, string> = { accept: 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, {
      method: init.method ?? 'GET',
      headers,
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      cache: 'no-store',
    });
  } catch (error) {
    throw new ApiError(
      0,
      'NETWORK',
      `cannot reach the Quartermaster API (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = text === '' ? null : JSON.parse(text);
  } catch {
    body = null;
  }
  if (!res.ok) {
    const p = (body ?? {}) as { code?: string; detail?: string; title?: string; errors?: FieldError[] };
    const error = new ApiError(
      res.status,
      p.code ?? `HTTP_${res.status}`,
      p.detail ?? p.title ?? `${res.status} ${res.statusText}`,
      p.errors ?? [],
    );
    if (res.status === 401 && init.token === undefined) for (const l of unauthorized) l(error.detail);
    throw error;
  }
  return body as T;
}

/** Builds `path?k=v…`, leaving out empty values. */
export function withQuery(path: string, query: Record<string, string | number | undefined | null>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query))
    if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  const qs = params.toString();
  return qs === '' ? path : `${path}?${qs}`;
}
