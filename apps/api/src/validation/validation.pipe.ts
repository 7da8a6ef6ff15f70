import { type ArgumentMetadata, ValidationPipe, type ValidationError } from '@nestjs/common';
import { AppError, type FieldError } from '#common';

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

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' && metadata.metatype && this.toValidate(metadata)) {
      if (value === undefined) value = {}; // no body at all: required fields are reported one by one
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        throw validationFailed([{ field: '(body)', message: 'must be a JSON object' }]);
      }
    }
    return super.transform(value, metadata);
  }
}
