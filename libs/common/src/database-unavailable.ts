/**
 * Whether an error means Postgres could not be reached or stopped answering (as opposed to a bad query
 * or a constraint): connection refused/reset/closed, a connect or query timeout, a server shutting down
 * or out of connections. The API answers these with 503 DATABASE_UNAVAILABLE and Retry-After, the
 * scheduler retries its cycle. Recognises node-postgres errors and Prisma's (driver adapter) wrappings
 * by their codes, walking `cause` chains; no driver is imported.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const seen = new Set<unknown>();
  const stack: unknown[] = [error];
  while (stack.length > 0) {
    const e = stack.pop();
    if (typeof e !== 'object' || e === null || seen.has(e)) continue;
    seen.add(e);
    const { code, kind, message, cause, meta, errors } = e as Record<string, unknown>;
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || PRISMA_CODES.has(code) || unavailableSqlState(code))) return true;
    if (typeof kind === 'string' && ADAPTER_KINDS.has(kind)) return true;
    if (typeof message === 'string' && PG_MESSAGES.some((m) => message.includes(m))) return true;
    // A transaction that waited for a connection longer than its maxWait (a black-holed link holds every
    // connection attempt): the outage seen a moment before the connect timeout would report it.
    if (code === 'P2028' && typeof message === 'string' && message.includes('Unable to start a transaction in the given time')) return true;
    stack.push(cause);
    if (typeof meta === 'object' && meta !== null) stack.push((meta as Record<string, unknown>)['driverAdapterError']);
    if (Array.isArray(errors)) stack.push(...(errors as unknown[]));
  }
  return false;
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/** Can't reach / timed out / closed connection / pool timeout. */
const PRISMA_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024']);

const ADAPTER_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections', 'TlsConnectionError']);

/** What node-postgres says when a connection dies or times out (its errors carry no code). */
const PG_MESSAGES = [
  'Connection terminated',
  'Query read timeout',
  'timeout expired',
  'timeout exceeded when trying to connect',
  'is not queryable',
  'Connection ended',
];

/**
 * SQLSTATEs of an unavailable server: connection exceptions (08), shutdown or not accepting connections
 * (57P01-57P03), too many connections (53300), a statement cancelled by statement_timeout (57014) and a
 * session ended for idling in a transaction (25P03).
 */
function unavailableSqlState(code: string): boolean {
  return /^08[0-9A-Z]{3}$/.test(code) || ['57P01', '57P02', '57P03', '53300', '57014', '25P03'].includes(code);
}
