import { beforeAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { type ContractFiles, contractFiles } from './contract.js';

/** The parts of an OpenAPI 3 document the documentation check reads. */
interface SchemaObject {
  $ref?: string;
  allOf?: SchemaObject[];
  items?: SchemaObject;
  properties?: Record<string, SchemaObject>;
  example?: unknown;
  enum?: unknown[];
  default?: unknown;
}
interface OpenApiDocument {
  paths: Record<string, Record<string, { summary?: string; description?: string }>>;
  components: { schemas: Record<string, SchemaObject> };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];
const SUMMARY_MAX = 80;
const SCHEMA_REF = '#/components/schemas/';

/**
 * What a reader of the document would miss: every operation (`METHOD path`) without a summary or a
 * description, or with a summary over 80 characters or ending with '.', and every property of a request
 * DTO (a component schema named `*Dto`) with neither `example`, `enum` nor `default` — unless it is a
 * reference to another Dto schema (or an array of them), which is checked itself.
 */
function undocumented(document: OpenApiDocument): string[] {
  const problems: string[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue;
      const name = `${method.toUpperCase()} ${path}`;
      const summary = operation.summary?.trim() ?? '';
      if (summary === '') problems.push(`${name}: no summary`);
      else if (summary.length > SUMMARY_MAX) problems.push(`${name}: summary of ${summary.length} characters (at most ${SUMMARY_MAX})`);
      else if (summary.endsWith('.')) problems.push(`${name}: summary ends with '.'`);
      if ((operation.description?.trim() ?? '') === '') problems.push(`${name}: no description`);
    }
  }
  const schemas = document.components.schemas;
  for (const [schemaName, schema] of Object.entries(schemas)) {
    if (!schemaName.endsWith('Dto')) continue;
    for (const [property, value] of Object.entries(schema.properties ?? {})) {
      const missing = propertyProblem(value, schemas);
      if (missing !== null) problems.push(`${schemaName}.${property}: ${missing}`);
    }
  }
  return problems;
}

/** Why a DTO property is not documented by example, or null when it is. */
function propertyProblem(value: SchemaObject, schemas: Record<string, SchemaObject>): string | null {
  if ('example' in value || 'enum' in value || 'default' in value) return null;
  // `allOf: [{ $ref }]` is how a reference carries a description of its own.
  if (value.allOf?.length === 1 && value.allOf[0] !== undefined) return propertyProblem(value.allOf[0], schemas);
  if (value.$ref !== undefined) {
    const target = value.$ref.startsWith(SCHEMA_REF) ? value.$ref.slice(SCHEMA_REF.length) : '';
    if (target === '' || schemas[target] === undefined) return `refers to no schema (${value.$ref})`;
    return target.endsWith('Dto') ? null : `refers to ${target}, not a Dto schema, and has no example`;
  }
  if (value.items !== undefined) return propertyProblem(value.items, schemas);
  return 'no example, enum or default';
}

describe('the API contract in libs/api-client', () => {
  let files: ContractFiles;
  beforeAll(async () => {
    files = await contractFiles();
  });

  it('is exactly what the controllers and DTOs generate now (run npm run api:contract after changing a view or DTO)', async () => {
    for (const [name, text] of Object.entries(files)) {
      const committed = await readFile(new URL(`../../../../libs/api-client/${name}`, import.meta.url), 'utf8');
      // Compared line by line, so that a failure shows where the contract moved.
      expect({ name, lines: committed.split('\n') }).toEqual({ name, lines: text.split('\n') });
    }
  });

  it('documents every operation (summary and description) and every request DTO property (example, enum or default)', () => {
    // Each entry names the operation or the property: add @ApiOperation({ summary, description }) to the
    // handler, or an example to the property's @ApiProperty.
    expect(undocumented(JSON.parse(files['openapi.json']) as OpenApiDocument)).toEqual([]);
  });
});
