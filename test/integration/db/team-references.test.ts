import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Database, MissingReferenceError, PriorityClassRepository, TeamRepository, createTestDatabase, type TestDatabase } from '#db';

jest.setTimeout(60_000);

/**
 * A team refers to a cohort and to its highest priority class. When the referenced row is missing at the
 * write (deleted after the API's check), the foreign key refuses it and the repository must say which.
 */
describe("a team's references refused by their foreign keys", () => {
  let testDb: TestDatabase;
  let db: Database;
  beforeAll(async () => {
    testDb = await createTestDatabase({ label: 'team_references' });
    db = new Database(testDb.url, { poolSize: 2 });
  });
  afterAll(async () => {
    await db?.close();
    await testDb?.drop();
  });

  const settings = { cohort: null, fairShareWeight: 1, withinTeam: 'LowerPriority', reclaimWithinCohort: 'Any' } as const;
  const refusal = (p: Promise<unknown>): Promise<unknown> => p.then(() => 'written', (e: unknown) => (e instanceof MissingReferenceError ? { field: e.field, value: e.value } : e));

  it('an unknown priority class is named as such, on create, replace and patch; nothing is written', async () => {
    const teams = new TeamRepository(db);
    expect(await refusal(teams.upsert('vision', { ...settings, maxPriorityClass: 'gone' }, 'test'))).toEqual({ field: 'maxPriorityClass', value: 'gone' });
    expect(await teams.get('vision')).toBeNull();
    await teams.upsert('vision', settings, 'test');
    expect(await refusal(teams.upsert('vision', { ...settings, maxPriorityClass: 'gone' }, 'test'))).toEqual({ field: 'maxPriorityClass', value: 'gone' });
    expect(await refusal(teams.patch('vision', { maxPriorityClass: 'gone' }, 'test'))).toEqual({ field: 'maxPriorityClass', value: 'gone' });
    expect((await teams.get('vision'))?.maxPriorityClass).toBeNull();
  });

  it('an unknown cohort is still named as the cohort; a known class is kept', async () => {
    const teams = new TeamRepository(db);
    await new PriorityClassRepository(db).upsert('high', { value: 1000, description: '', isDefault: false }, 'test');
    expect(await refusal(teams.patch('vision', { cohort: 'nowhere', maxPriorityClass: 'high' }, 'test'))).toEqual({ field: 'cohort', value: 'nowhere' });
    expect((await teams.patch('vision', { maxPriorityClass: 'high' }, 'test'))?.maxPriorityClass).toBe('high');
  });
});
