import { applyDecorators } from '@nestjs/common';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateBy,
  type ValidationArguments,
} from 'class-validator';
import { DNS_LABEL, DNS_LABEL_MAX } from '#common';
import { JsonMap } from './body-shape.js';

/** Messages are relative to the field: the problem+json `errors` list pairs them with the field path. */
const DNS_MESSAGE = `must be a DNS-1123 label (lower-case letters, digits and '-', starting and ending with a letter or digit, at most ${DNS_LABEL_MAX} characters)`;

export const Required = (): PropertyDecorator => IsDefined({ message: 'is required' });

/** A DNS-1123 label. */
export const IsName = (): PropertyDecorator =>
  applyDecorators(
    IsString({ message: 'must be a string' }),
    MaxLength(DNS_LABEL_MAX, { message: DNS_MESSAGE }),
    Matches(DNS_LABEL, { message: DNS_MESSAGE }),
  );

/** A list of unique DNS-1123 labels. */
export const IsNameList = (min: number, max: number): PropertyDecorator =>
  applyDecorators(
    IsArray({ message: 'must be an array of names' }),
    ArrayMinSize(min, { message: `must list at least ${min}` }),
    ArrayMaxSize(max, { message: `must list at most ${max}` }),
    ArrayUnique({ message: 'must not repeat a name' }),
    IsString({ each: true, message: 'must contain only strings' }),
    Matches(DNS_LABEL, { each: true, message: `each ${DNS_MESSAGE}` }),
    MaxLength(DNS_LABEL_MAX, { each: true, message: `each ${DNS_MESSAGE}` }),
  );

export const IntIn = (min: number, max: number): PropertyDecorator =>
  applyDecorators(
    IsInt({ message: 'must be an integer' }),
    Min(min, { message: `must be ≥ ${min}` }),
    Max(max, { message: `must be ≤ ${max}` }),
  );

export const NumberIn = (min: number, max: number): PropertyDecorator =>
  applyDecorators(
    IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'must be a number' }),
    Min(min, { message: `must be ≥ ${min}` }),
    Max(max, { message: `must be ≤ ${max}` }),
  );

export const OneOf = (values: readonly string[]): PropertyDecorator =>
  IsIn(values as string[], { message: `must be one of ${values.join(', ')}` });

export const IsText = (min: number, max: number): PropertyDecorator =>
  applyDecorators(
    IsString({ message: 'must be a string' }),
    MinLength(min, { message: min === 1 ? 'must not be empty' : `must have at least ${min} characters` }),
    MaxLength(max, { message: `must have at most ${max} characters` }),
  );

export const IsBool = (): PropertyDecorator => IsBoolean({ message: 'must be true or false' });

export const Optional = (): PropertyDecorator => IsOptional();

export interface StringMapRules {
  maxEntries: number;
  keyPattern: RegExp;
  keyHint: string;
  maxKeyLength: number;
  maxValueLength: number;
  valuePattern?: RegExp;
}

/** A JSON object whose keys and values are bounded strings (labels, env), stored exactly as sent. */
export const IsStringMap = (rules: StringMapRules): PropertyDecorator =>
  applyDecorators(JsonMap(), ValidateBy({
    name: 'isStringMap',
    validator: {
      validate: (value: unknown) => stringMapProblem(value, rules) === null,
      defaultMessage: (args?: ValidationArguments) => stringMapProblem(args?.value, rules) ?? 'is invalid',
    },
  }));

function stringMapProblem(value: unknown, rules: StringMapRules): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'must be an object of string values';
  const entries = Object.entries(value);
  if (entries.length > rules.maxEntries) return `must have at most ${rules.maxEntries} entries`;
  for (const [k, v] of entries) {
    if (k.length === 0 || k.length > rules.maxKeyLength || !rules.keyPattern.test(k)) return `key '${k.slice(0, 80)}' ${rules.keyHint}`;
    if (typeof v !== 'string') return `value of '${k}' must be a string`;
    if (v.length > rules.maxValueLength) return `value of '${k}' must have at most ${rules.maxValueLength} characters`;
    if (rules.valuePattern && !rules.valuePattern.test(v)) return `value of '${k}' is not a valid value`;
  }
  return null;
}

/** A JSON object from names (of the same object's `keysFrom` list) to bounded positive numbers, stored exactly as sent. */
export const IsSpeedMap = (keysFrom: string): PropertyDecorator =>
  applyDecorators(JsonMap(), ValidateBy({
    name: 'isSpeedMap',
    constraints: [keysFrom],
    validator: {
      validate: (value: unknown, args?: ValidationArguments) => speedMapProblem(value, args) === null,
      defaultMessage: (args?: ValidationArguments) => speedMapProblem(args?.value, args) ?? 'is invalid',
    },
  }));

function speedMapProblem(value: unknown, args?: ValidationArguments): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'must be an object from flavor name to a positive number';
  const listName = String(args?.constraints[0]);
  const owner = (args?.object ?? {}) as Record<string, unknown>;
  const allowed = Array.isArray(owner[listName]) ? (owner[listName] as unknown[]) : [];
  for (const [k, v] of Object.entries(value)) {
    if (!allowed.includes(k)) return `key '${k.slice(0, 80)}' is not one of the job's ${listName}`;
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0 || v > 1_000_000) return `value of '${k}' must be a number > 0 and ≤ 1000000`;
  }
  return null;
}

/** The number is at most the object's `other` number (e.g. minReplicas ≤ replicas). */
export const AtMost = (other: string): PropertyDecorator =>
  ValidateBy({
    name: 'atMost',
    constraints: [other],
    validator: {
      validate: (value: unknown, args?: ValidationArguments) => {
        const limit = (args?.object as Record<string, unknown> | undefined)?.[other];
        return typeof value !== 'number' || typeof limit !== 'number' || value <= limit;
      },
      defaultMessage: () => `must be ≤ ${other}`,
    },
  });
