import { describe, expect, it } from '@jest/globals';
import { inline, literal, message } from './sql-message.js';

describe('sql-message', () => {
  it('quotes values as pg would send them as parameters', () => {
    expect(literal(null)).toBe('NULL');
    expect(literal(undefined)).toBe('NULL');
    expect(literal("it's")).toBe("'it''s'");
    expect(literal('a\\b')).toBe(" E'a\\\\b'");
    expect(literal(42)).toBe("'42'");
    expect(literal(12345678901234567890n)).toBe("'12345678901234567890'");
    expect(literal(['a', "b'c", null])).toBe(`'{"a","b''c",NULL}'`);
    expect(literal({ k: "v'" })).toBe(`'{"k":"v''"}'`);
    expect(() => literal('a\0b')).toThrow(/NUL/);
  });

  it('inlines $n by number ($10 is not $1 followed by 0), once (a value holding $2 stays as it is)', () => {
    const values = ['$2', 'b', 3, 4, 5, 6, 7, 8, 9, 'ten'];
    expect(inline('SELECT $1, $10, $2::text', values)).toBe("SELECT '$2', 'ten', 'b'::text");
    expect(() => inline('SELECT $3', [1])).toThrow(/\$3/);
  });

  it('joins statements with their parameters inlined', () => {
    expect(message(['BEGIN', { text: 'SELECT $1::int', values: [1] }, { text: 'SELECT 2' }, 'COMMIT'])).toBe("BEGIN;\nSELECT '1'::int;\nSELECT 2;\nCOMMIT");
  });
});
