import { CliFailure, EXIT_FAILURE, EXIT_USAGE } from '../errors.js';

/** One offending field of a 400 (problem+json `errors`). */
export interface ProblemField {
  field: string;
  message: string;
}

/** An error answer of the API (problem+json), as one line for the terminal. */
export class ApiError extends CliFailure {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    readonly detail: string,
    readonly errors: ProblemField[],
  ) {
    super(describeProblem(status, code, detail, errors));
  }

  /** 400 and 422 (the request's fields are wrong: the answer names them) exit with 2 like a usage error; the rest with 1. */
  override get exitCode(): number {
    return this.status === 400 || this.status === 422 ? EXIT_USAGE : EXIT_FAILURE;
  }

  /** Worth asking again (a watch goes on): the server failed or is overloaded, not the request. */
  get transient(): boolean {
    return this.status >= 500 || this.status === 429 || this.status === 408;
  }
}

export interface RequestOptions {
  body?: unknown;
  query?: Record<string, string | number | undefined>;
  headers?: Record<string, string>;
  /** `Accept` (default application/json); with text/*, the body is returned as a string. */
  accept?: string;
  /** Aborts the request (a watch stopped by Ctrl-C or SIGTERM). */
  signal?: AbortSignal;
}

export interface Reply<T> {
  status: number;
  body: T;
}

/**
 * The REST API, as `qm` uses it: JSON in and out, `Authorization: Bearer`, errors turned into one line
 * (ApiError from problem+json; CliFailure when the server cannot be reached or answers something else).
 */
export class ApiClient {
  constructor(
    readonly server: string,
    private readonly token: string,
    private readonly timeoutMs = 30_000,
  ) {}

  async request<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<Reply<T>> {
    const url = new URL(path.replace(/^\//, ''), this.server.endsWith('/') ? this.server : `${this.server}/`);
    for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}`, accept: options.accept ?? 'application/json', ...options.headers };
    let body: string | undefined;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    let res: Response;
    try {
      const timeout = AbortSignal.timeout(this.timeoutMs);
      res = await fetch(url, { method, headers, body, signal: options.signal === undefined ? timeout : AbortSignal.any([timeout, options.signal]) });
    } catch (error) {
      throw new CliFailure(`cannot reach the Quartermaster API at ${this.server}: ${networkReason(error, this.timeoutMs)} (is it running? check --server, QM_SERVER or qm login)`);
    }
    let text: string;
    try {
      text = await res.text();
    } catch (error) {
      throw new CliFailure(`the Quartermaster API at ${this.server} closed the connection mid-answer: ${networkReason(error, this.timeoutMs)}`);
    }
    const type = res.headers.get('content-type') ?? '';
    if (!res.ok) throw errorOf(res.status, type, text, this.server);
    if (options.accept !== undefined && options.accept.startsWith('text/')) return { status: res.status, body: text as T };
    if (res.status === 204 || text === '') return { status: res.status, body: null as T };
    try {
      return { status: res.status, body: JSON.parse(text) as T };
    } catch {
      throw new CliFailure(`${this.server} answered HTTP ${res.status} with something that is not JSON (${snippet(text)}): is --server the Quartermaster API?`);
    }
  }

  get<T = unknown>(path: string, query?: RequestOptions['query'], signal?: AbortSignal): Promise<T> {
    return this.request<T>('GET', path, { query, ...(signal === undefined ? {} : { signal }) }).then((r) => r.body);
  }
}

function errorOf(status: number, type: string, text: string, server: string): CliFailure {
  if (type.includes('json')) {
    try {
      const p = JSON.parse(text) as { detail?: unknown; code?: unknown; errors?: unknown; title?: unknown };
      const errors = Array.isArray(p.errors)
        ? p.errors.filter((e): e is ProblemField => typeof e === 'object' && e !== null && typeof (e as ProblemField).field === 'string')
        : [];
      const detail = typeof p.detail === 'string' ? p.detail : typeof p.title === 'string' ? p.title : `HTTP ${status}`;
      return new ApiError(status, typeof p.code === 'string' ? p.code : undefined, detail, errors);
    } catch {
      // fall through: not the API's problem+json
    }
  }
  return new ApiError(status, undefined, `${server} answered HTTP ${status}${text ? ` (${snippet(text)})` : ''}`, []);
}

/** One line: the problem's detail; for invalid input every field with its reason; a hint for 401. */
export function describeProblem(status: number, code: string | undefined, detail: string, errors: ProblemField[]): string {
  let line = detail;
  if (errors.length > 0 && (status === 400 || status === 422)) {
    const fields = errors.map((e) => `${e.field || '(body)'}: ${e.message}`).join('; ');
    line = status === 400 ? `invalid request: ${fields}` : fields;
  }
  if (status === 401) line += ' (run qm login, or set QM_TOKEN)';
  if (status === 404 && detail === 'no such route') line += ': is --server the base URL of the Quartermaster API (e.g. http://localhost:8080)?';
  if (status >= 500 && code !== undefined) line = `server error (HTTP ${status}): ${line}`;
  return line.replace(/\s*\n\s*/g, ' ');
}

function networkReason(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) return `no answer within ${Math.round(timeoutMs / 1000)} s`;
  const cause = (error as { cause?: unknown }).cause;
  const codes = new Set<string>();
  const collect = (e: unknown): void => {
    if (typeof e !== 'object' || e === null) return;
    const c = (e as { code?: unknown }).code;
    if (typeof c === 'string') codes.add(c);
    const inner = (e as { errors?: unknown }).errors;
    if (Array.isArray(inner)) inner.forEach(collect);
  };
  collect(cause);
  collect(error);
  if (codes.has('ECONNREFUSED')) return 'connection refused';
  if (codes.has('ENOTFOUND') || codes.has('EAI_AGAIN')) return 'unknown host';
  if (codes.has('ECONNRESET') || codes.has('UND_ERR_SOCKET')) return 'connection reset';
  if (codes.has('ETIMEDOUT') || codes.has('UND_ERR_CONNECT_TIMEOUT')) return 'connection timed out';
  if (codes.has('EHOSTUNREACH') || codes.has('ENETUNREACH')) return 'host unreachable';
  const first = [...codes][0];
  const message = cause instanceof Error ? cause.message : error instanceof Error ? error.message : String(error);
  return first !== undefined && !message.includes(first) ? `${first}: ${message}` : message;
}

const snippet = (text: string): string => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 80 ? `${flat.slice(0, 77)}...` : flat;
};
