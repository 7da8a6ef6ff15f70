// Keys are data in a JSON body, whatever they are called. class-transformer (which turns a body into its
// DTO) silently drops keys named like Object.prototype members (`toString`, `hasOwnProperty`, `constructor`,
// `__proto__`) and throws on an object with a `constructor` key (it calls `new value.constructor()`): an
// unknown top-level `toString` was accepted, `nodeLabels: {"toString": "yes"}` stored as `{}`, and
// `env: {"constructor": "x"}` answered 500. So before class-transformer sees a body, this walks it beside
// its DTO classes: a key a DTO does not declare is an unknown field (400) whatever its name, and the value
// of a map field (`@JsonMap()`: labels, env, speeds) is set aside and handed to the DTO untouched, as a
// null-prototype copy, so no lookup on it can reach Object.prototype.
import { createRequire } from 'node:module';
import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import type { MetadataStorage as TransformerMetadata } from 'class-transformer/types/MetadataStorage.js';
import { getMetadataStorage } from 'class-validator';
import type { FieldError } from '#common';

// The storage @Type() writes to: the one instance every copy of class-transformer's CommonJS build shares
// with @nestjs/common's ValidationPipe (the package has no export map, so its files are reachable).
const { defaultMetadataStorage } = createRequire(import.meta.url)('class-transformer/cjs/storage.js') as { defaultMetadataStorage: TransformerMetadata };

type Ctor = abstract new (...args: never[]) => unknown;

/** A JSON object whose keys are data; class-transformer sees this empty stand-in instead. */
class MapStandIn {}
const standIns = new WeakMap<object, Record<string, unknown>>();
const mapFields = new WeakMap<object, Set<string>>();

/** A null-prototype copy: `copy.toString` is whatever the client sent under that key, or undefined. */
export function nullPrototypeCopy(value: Record<string, unknown>): Record<string, unknown> {
  const copy = Object.create(null) as Record<string, unknown>;
  for (const key of Object.keys(value)) Object.defineProperty(copy, key, { value: value[key], enumerable: true, writable: true, configurable: true });
  return copy;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Marks a DTO property as a map whose keys are data (validated by its own rules, e.g. IsStringMap): its
 * object reaches the DTO exactly as sent, with a null prototype.
 */
export const JsonMap = (): PropertyDecorator =>
  applyDecorators(
    (target: object, property: string | symbol) => {
      const owner = target.constructor;
      const fields = mapFields.get(owner) ?? new Set<string>();
      fields.add(String(property));
      mapFields.set(owner, fields);
    },
    Transform(
      ({ obj, key, value }: { obj: Record<string, unknown>; key: string; value: unknown }) => {
        const raw = obj[key];
        const sent = typeof raw === 'object' && raw !== null ? (standIns.get(raw) ?? raw) : raw;
        return isPlainObject(sent) ? nullPrototypeCopy(sent) : value;
      },
      { toClassOnly: true },
    ),
  );

const declaredCache = new WeakMap<Ctor, Set<string>>();

function declared(type: Ctor): Set<string> {
  let names = declaredCache.get(type);
  if (!names) {
    names = new Set(getMetadataStorage().getTargetValidationMetadatas(type, '', true, false).map((m) => m.propertyName));
    declaredCache.set(type, names);
  }
  return names;
}

function isMapField(type: Ctor, property: string): boolean {
  for (let t: unknown = type; typeof t === 'function' && t !== Function.prototype; t = Object.getPrototypeOf(t)) {
    if (mapFields.get(t)?.has(property)) return true;
  }
  return false;
}

function nestedType(type: Ctor, property: string): Ctor | null {
  const meta = defaultMetadataStorage.findTypeMetadata(type, property);
  const nested = meta?.typeFunction?.() as unknown;
  return typeof nested === 'function' && nested !== Object && nested !== Number && nested !== String && nested !== Boolean ? (nested as Ctor) : null;
}

/** An object where a string, number or list of them belongs: stands in as an empty object (arrays keep their length). */
function inert(value: object): unknown {
  if (Array.isArray(value)) return value.map((item: unknown) => (typeof item === 'object' && item !== null ? inert(item) : item));
  return new MapStandIn();
}

/**
 * Walks a parsed JSON body beside its DTO class: returns every key no DTO declares (as field errors in the
 * validation pipe's notation) and removes it, and replaces each map field's object by a stand-in that class-transformer
 * passes over, from which `@JsonMap()` restores the object as sent. Modifies `value` (a freshly parsed body).
 */
export function shieldBody(value: Record<string, unknown>, type: Ctor, path = '', out: FieldError[] = []): FieldError[] {
  const known = declared(type);
  for (const key of Object.keys(value)) {
    const field = path === '' ? key : `${path}.${key}`;
    if (!known.has(key)) {
      out.push({ field, message: 'is not a known field' });
      delete value[key]; // reported here; the validators report the other fields
      continue;
    }
    const child = value[key];
    if (typeof child !== 'object' || child === null) continue;
    if (isMapField(type, key)) {
      if (Array.isArray(child)) {
        value[key] = inert(child);
      } else {
        const standIn = new MapStandIn();
        standIns.set(standIn, child as Record<string, unknown>);
        value[key] = standIn;
      }
      continue;
    }
    const nested = nestedType(type, key);
    if (nested === null) {
      value[key] = inert(child); // not an object field: its validators report the type; nothing in it is read
      continue;
    }
    if (Array.isArray(child)) {
      child.forEach((item, i) => {
        if (isPlainObject(item)) shieldBody(item, nested, `${field}[${i}]`, out);
      });
    } else {
      shieldBody(child as Record<string, unknown>, nested, field, out);
    }
  }
  return out;
}
