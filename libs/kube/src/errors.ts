import { ApiException } from '@kubernetes/client-node';

/** HTTP status of a Kubernetes API error, or undefined for anything else (network errors, bugs). */
export function apiStatusOf(error: unknown): number | undefined {
  if (error instanceof ApiException) return error.code;
  if (error instanceof KubeApiError) return error.status;
  return undefined;
}

function messageOf(body: unknown): string {
  if (typeof body === 'string') {
    try {
      return messageOf(JSON.parse(body) as unknown);
    } catch {
      return body.slice(0, 500);
    }
  }
  if (body && typeof body === 'object' && 'message' in body && typeof body.message === 'string') return body.message;
  return '';
}

/** A Kubernetes API call failed: what was attempted, the HTTP status and the API server's message. */
export class KubeApiError extends Error {
  constructor(
    readonly operation: string,
    readonly status: number | undefined,
    detail: string,
    private readonly options?: { cause?: unknown; retryable?: boolean },
  ) {
    super(`${operation} failed${status === undefined ? '' : ` (HTTP ${status})`}: ${detail}`, options);
    this.name = 'KubeApiError';
  }

  /** 429, 5xx and network errors are worth retrying; other 4xx are not (unless said otherwise). */
  get retryable(): boolean {
    if (this.options?.retryable !== undefined) return this.options.retryable;
    return this.status === undefined || this.status === 429 || this.status >= 500;
  }

  static from(operation: string, error: unknown): KubeApiError {
    if (error instanceof KubeApiError) return error;
    if (error instanceof ApiException) {
      return new KubeApiError(operation, error.code, messageOf(error.body) || error.message, { cause: error });
    }
    return new KubeApiError(operation, undefined, error instanceof Error ? error.message : String(error), { cause: error });
  }
}

/** The pod is already bound to another node than the one asked for. Not retryable: a decision conflict. */
export class PodBoundElsewhereError extends Error {
  constructor(
    readonly namespace: string,
    readonly pod: string,
    readonly requestedNode: string,
    readonly boundNode: string,
  ) {
    super(`pod ${namespace}/${pod} is bound to node ${boundNode}, not ${requestedNode}`);
    this.name = 'PodBoundElsewhereError';
  }
}

/** The pod does not exist (or was replaced by another pod of the same name, when a uid was given). */
export class PodNotFoundError extends Error {
  constructor(
    readonly namespace: string,
    readonly pod: string,
    detail = 'not found',
  ) {
    super(`pod ${namespace}/${pod}: ${detail}`);
    this.name = 'PodNotFoundError';
  }
}

/** A pod of that name exists but belongs to another job. */
export class PodConflictError extends Error {
  constructor(
    readonly namespace: string,
    readonly pod: string,
    detail: string,
  ) {
    super(`pod ${namespace}/${pod} already exists: ${detail}`);
    this.name = 'PodConflictError';
  }
}

/** A pod of that name is still terminating (an earlier run of the same replica). Retry later. */
export class PodTerminatingError extends Error {
  readonly retryable = true;
  constructor(
    readonly namespace: string,
    readonly pod: string,
  ) {
    super(`pod ${namespace}/${pod} is still terminating from an earlier run; retry once it is gone`);
    this.name = 'PodTerminatingError';
  }
}

/** The Eviction API refused (429): a PodDisruptionBudget does not allow it now. Retry later. */
export class EvictionBlockedError extends Error {
  readonly retryable = true;
  constructor(
    readonly namespace: string,
    readonly pod: string,
    detail: string,
  ) {
    super(`eviction of pod ${namespace}/${pod} refused for now: ${detail}`);
    this.name = 'EvictionBlockedError';
  }
}
