import { type ArgumentMetadata, ValidationPipe, type ValidationError } from '@nestjs/common';
import { AppError, type FieldError } from '#common';
import { shieldBody } from './body-shape.js';

const TYPE_CONSTRAINTS = new Set(['isInt', 'isString', 'isNumber', 'isBoolean', 'isArray', 'isObject', 'isIn', 'nestedValidation']);

/**
 * Flattens class-validator's error tree into one entry per offending field, with dotted paths
 * (`template.cpuMillis`, `flavors[1]`) and the messages of every rule it breaks.
 */
export function fieldErrors(errors: ValidationError[], prefix = ''): FieldError[] {
  const out: FieldError[] = [];
  for (const e of errors) {
    const field = prefix === '' ? e.property : /^\d+$/.test(e.property) ? `${prefix}[${e.property}]` : `${prefix}.${e.property}`;
    const constraints = e.constraints ?? {};
    const keys = Object.keys(constraints);
    if (keys.length > 0) {
      let messages: string[];
      if ('whitelistValidation' in constraints) messages = ['is not a known field'];
      else if ('isDefined' in constraints) messages = ['is required'];
      else {
        // A value of the wrong type breaks every rule; its type is the one thing worth saying.
        const typeKeys = keys.filter((k) => TYPE_CONSTRAINTS.has(k));
        messages = (typeKeys.length > 0 ? typeKeys : keys).map((k) => stripProperty(constraints[k] ?? 'is invalid', e.property));
      }
      out.push({ field, message: [...new Set(messages)].join('; ') });
    }
    if (e.children && e.children.length > 0) out.push(...fieldErrors(e.children, field));
  }
  return out;
}

function stripProperty(message: string, property: string): string {
  return message.startsWith(`${property} `) ? message.slice(property.length + 1) : message;
}

export function validationFailed(errors: FieldError[]): AppError {
  const fields = errors.map((e) => e.field || '(body)');
  return new AppError('VALIDATION_FAILED', `invalid field${fields.length === 1 ? '' : 's'}: ${fields.join(', ')}`, errors);
}

/**
 * The global pipe: whitelist + forbidNonWhitelisted + transform, no implicit type conversion of bodies,
 * and errors as VALIDATION_FAILED with every offending field. A body that is not a JSON object is refused
 * before class-validator sees it.
 */
export class ApiValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      forbidUnknownValues: true,
      transform: true,
      transformOptions: { enableImplicitConversion: false },
      validationError: { target: false, value: false },
      stopAtFirstError: false,
      exceptionFactory: (errors: ValidationError[]) => validationFailed(fieldErrors(errors)),
    });
  }

  /** Bodies and queries shieldBody walked: a `__proto__` key in them is data or an unknown field, never stripped. */
  private readonly shielded = new WeakSet<object>();

  // The API reads only JSON bodies and query strings: no sparse arrays and no binary values can reach
  // the pipe, so Nest's passes for them are skipped (they cost ~40% of the pipe on a job submission).
  protected override closeArrayGaps(): void {}

  protected override findNestedBinaryValues(): ValidationError[] {
    return [];
  }

  protected override stripProtoKeys(value: unknown): void {
    if (typeof value === 'object' && value !== null && this.shielded.has(value)) return;
    super.stripProtoKeys(value);
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' && metadata.metatype && this.toValidate(metadata)) {
      if (value === undefined) value = {}; // no body at all: required fields are reported one by one
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        throw validationFailed([{ field: '(body)', message: 'must be a JSON object' }]);
      }
      // Postgres text and jsonb cannot hold U+0000 or unpaired UTF-16 surrogates: refuse them here
      // rather than fail at the INSERT.
      const bad = unstorablePaths(value);
      if (bad.length > 0) {
        throw validationFailed(bad.map((field) => ({ field, message: 'must not contain U+0000 or unpaired surrogate characters' })));
      }
    }
    if ((metadata.type === 'body' || metadata.type === 'query') && metadata.metatype && this.toValidate(metadata) && typeof value === 'object' && value !== null) {
      // Keys are data whatever their name: unknown fields (`toString`, `__proto__` too) are refused here,
      // and maps reach the DTO exactly as sent (class-transformer would drop or trip over such keys).
      const unknown = shieldBody(value as Record<string, unknown>, metadata.metatype);
      this.shielded.add(value);
      if (unknown.length > 0) {
        // Every offending field in one answer: the unknown ones and whatever the validators find in the rest.
        const others = await super.transform(value, metadata).then(
          () => [],
          (error: unknown) => {
            if (error instanceof AppError && error.code === 'VALIDATION_FAILED') return error.errors;
            throw error;
          },
        );
        throw validationFailed([...unknown, ...others]);
      }
    }
    return super.transform(value, metadata);
  }
}

// eslint-disable-next-line no-control-regex -- U+0000 is exactly what this looks for
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Paths of every string (value or key) Postgres cannot store, in the same notation as the field errors. */
export function unstorablePaths(value: unknown, path = '', out: string[] = []): string[] {
  if (typeof value === 'string') {
    if (UNSTORABLE.test(value)) out.push(path || '(body)');
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => unstorablePaths(v, `${path}[${i}]`, out));
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const p = path === '' ? k : `${path}.${k}`;
      if (UNSTORABLE.test(k)) out.push(p);
      else unstorablePaths(v, p, out);
    }
  }
  return out;
}
