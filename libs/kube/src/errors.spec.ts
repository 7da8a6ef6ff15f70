import { describe, expect, it } from '@jest/globals';
import { ApiException } from '@kubernetes/client-node';
import { KubeApiError, apiStatusOf } from './errors.js';

describe('KubeApiError', () => {
  it('carries the operation, the status and the API server\'s message', () => {
    const body = JSON.stringify({ kind: 'Status', message: 'pods "x" is forbidden: no', code: 403 });
    const error = KubeApiError.from('create pod ns/x', new ApiException(403, 'Unknown API Status Code!', body, {}));
    expect(error.message).toBe('create pod ns/x failed (HTTP 403): pods "x" is forbidden: no');
    expect(error.status).toBe(403);
    expect(apiStatusOf(error)).toBe(403);
    expect(error.cause).toBeInstanceOf(ApiException);
  });

  it.each([
    [undefined, true],
    [429, true],
    [500, true],
    [503, true],
    [400, false],
    [403, false],
    [404, false],
    [409, false],
  ])('status %s is retryable: %s', (status, retryable) => {
    expect(new KubeApiError('op', status, 'detail').retryable).toBe(retryable);
  });

  it('can be marked retryable explicitly, and wraps network errors as retryable', () => {
    expect(new KubeApiError('op', 409, 'vanished', { retryable: true }).retryable).toBe(true);
    const network = KubeApiError.from('list nodes', new Error('connect ECONNREFUSED 127.0.0.1:6443'));
    expect(network).toMatchObject({ status: undefined, retryable: true });
    expect(network.message).toBe('list nodes failed: connect ECONNREFUSED 127.0.0.1:6443');
    expect(apiStatusOf(new Error('x'))).toBeUndefined();
  });
});
