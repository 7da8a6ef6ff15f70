// Values inlined into a one-round-trip message (libs/db sql-message.ts, what the cycle's read and commit
// use) reach Postgres exactly as the same values sent as parameters.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Database, createTestDatabase, type TestDatabase } from '#db';
import { inline } from '../../../libs/db/src/scheduling/sql-message.js';

describe('values inlined in a message', () => {
  let testDb: TestDatabase;
  let db: Database;
  beforeAll(async () => {
    testDb = await createTestDatabase({ label: 'sqlmsg' });
    db = new Database(testDb.url, { poolSize: 2 });
  });
  afterAll(async () => {
    await db.close();
    await testDb.drop();
  });

  it('read back equal to parameters: quotes, backslashes, unicode, JSON, arrays, dates, nulls', async () => {
    const text = 'SELECT $1::text AS a, $2::text AS b, $3::jsonb AS c, $4::text[] AS d, $5::timestamptz AS e, $6::uuid[] AS f, $7::text AS g, $8::int AS h';
    const values = [
      "it's \\ a 'test' \\' $1 ;-- ",
      'üñí 😀 \n\t line',
      { msg: 'quote " and \' and \\ backslash', list: [1, 'two', null], nested: { deep: '$$' } },
      ['a,b', 'c"d', "e'f", 'g\\h', '{i}', '', 'NULL'],
      new Date('2026-12-02T11:22:33.456Z'),
      ['00000000-0000-0000-0000-000000000001'],
      null,
      -17,
    ];
    const asParameters = await db.pool.query(text, values);
    const inlined = await db.pool.query(inline(text, values));
    expect(inlined.rows).toEqual(asParameters.rows);
    expect(inlined.rows[0].c).toEqual(values[2]);
    expect(inlined.rows[0].d).toEqual(values[3]);
  });
});
