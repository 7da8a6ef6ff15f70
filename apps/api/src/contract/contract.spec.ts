import { describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { contractFiles } from './contract.js';

describe('the API contract in libs/api-client', () => {
  it('is exactly what the controllers and DTOs generate now (run npm run api:contract after changing a view or DTO)', async () => {
    const files = await contractFiles();
    for (const [name, text] of Object.entries(files)) {
      const committed = await readFile(new URL(`../../../../libs/api-client/${name}`, import.meta.url), 'utf8');
      // Compared line by line, so that a failure shows where the contract moved.
      expect({ name, lines: committed.split('\n') }).toEqual({ name, lines: text.split('\n') });
    }
  });
});
