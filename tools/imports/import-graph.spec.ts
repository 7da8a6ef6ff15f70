import { describe, expect, it } from '@jest/globals';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { circles, importGraph, sourceFiles } from './import-graph.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('import circles', () => {
  it('finds a circle, type-only imports included, and none in a chain', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(circles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
    expect(circles(new Map([['a.ts', ['b.ts']], ['b.ts', []]]))).toEqual([]);
  });

  it('the apps and libraries have none (a module that needs a type of its importer takes it from a file of its own)', () => {
    const files = sourceFiles(root, ['apps', 'libs']);
    expect(files.length).toBeGreaterThan(300);
    const graph = importGraph(root, files);
    // The graph is real: the cycle state reaches the reservation book.
    expect(graph.get(path.join('libs', 'core', 'src', 'cycle-state.ts'))).toContain(path.join('libs', 'core', 'src', 'reservation-book.ts'));
    expect(circles(graph)).toEqual([]);
  });
});
