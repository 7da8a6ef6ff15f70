import pg from 'pg';

/**
 * Several statements sent as ONE simple-protocol message: one round trip to Postgres whatever their
 * number (node-postgres sends a query with parameters alone and waits for its answer before the next).
 * Postgres runs them in order and answers with one result per statement; after an error it skips the
 * rest of the message (an explicit transaction in it is then left aborted: the caller rolls back).
 *
 * A message has no parameters, so values are inlined as literals: `inline` replaces `$1…$n` of a
 * statement written for the extended protocol by the same value pg would have sent, quoted. Statements
 * must cast the parameters whose type Postgres cannot infer from an untyped literal (`$1::uuid[]`).
 */

/** pg's own conversion of a parameter to text (Date, array, JSON, bigint…): the extended protocol would send the same. */
const { prepareValue } = (pg as unknown as { utils: { prepareValue(this: void, v: unknown): string | Buffer | null } }).utils;

/** A value as a SQL literal: NULL, or a quoted string (E'…' when it holds a backslash). */
export function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  const prepared = prepareValue(value);
  if (prepared === null) return 'NULL';
  if (typeof prepared !== 'string') throw new Error('a binary parameter cannot be inlined in a message');
  const text = prepared;
  if (text.includes('\0')) throw new Error('a SQL literal cannot hold a NUL character');
  const quoted = text.replaceAll("'", "''");
  return text.includes('\\') ? ` E'${quoted.replaceAll('\\', '\\\\')}'` : `'${quoted}'`;
}

/** `text` with its `$n` parameters replaced by `values[n-1]` as literals. */
export function inline(text: string, values: readonly unknown[]): string {
  return text.replace(/\$(\d+)/g, (_, n: string) => {
    const i = Number(n) - 1;
    if (i < 0 || i >= values.length) throw new Error(`statement refers to $${n} but has ${values.length} value(s)`);
    return literal(values[i]);
  });
}

/** A statement with its parameters, as written for client.query(text, values). */
export interface Statement {
  text: string;
  values?: readonly unknown[];
}

/** The statements as one message (`;`-separated, parameters inlined). */
export function message(statements: readonly (Statement | string)[]): string {
  return statements
    .map((s) => (typeof s === 'string' ? s : s.values && s.values.length > 0 ? inline(s.text, s.values) : s.text))
    .join(';\n');
}
