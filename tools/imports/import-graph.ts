import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const IMPORT = /(?:import|export)[^;]*?from\s+'(\.{1,2}\/[^']+)'|import\(\s*'(\.{1,2}\/[^']+)'\s*\)/g;

/** Source files under `dirs` (relative to `root`): .ts and .tsx, without specs, declarations and generated code. */
export function sourceFiles(root: string, dirs: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) {
        if (name !== 'node_modules' && name !== 'generated' && name !== 'dist') walk(full);
      } else if (/\.tsx?$/.test(name) && !/\.(spec|d)\.tsx?$/.test(name)) out.push(path.relative(root, full));
    }
  };
  for (const d of dirs) walk(path.join(root, d));
  return out.sort();
}

/** Each file's relative imports that resolve to another of `files` (type-only imports included). */
export function importGraph(root: string, files: readonly string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(path.join(root, file), 'utf8');
    const deps = new Set<string>();
    for (const m of text.matchAll(IMPORT)) {
      const target = path.normalize(path.join(path.dirname(file), (m[1] ?? m[2])!));
      const stem = target.replace(/\.js$/, '');
      const hit = [`${stem}.ts`, `${stem}.tsx`, path.join(target, 'index.ts')].find((c) => known.has(c));
      if (hit !== undefined && hit !== file) deps.add(hit);
    }
    graph.set(file, [...deps].sort());
  }
  return graph;
}

/** The import circles: strongly connected groups of more than one file (Tarjan), each sorted. */
export function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      for (;;) {
        const w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
        if (w === v) break;
      }
      if (group.length > 1) out.push(group.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}
