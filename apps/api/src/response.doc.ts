import { applyDecorators, type Type } from '@nestjs/common';
import { ApiProperty, ApiResponse, type ApiPropertyOptions } from '@nestjs/swagger';

const DESCRIPTIONS: Record<number, string> = { 200: 'OK', 201: 'Created', 202: 'Accepted', 503: 'Service unavailable' };

/**
 * The success answers of a handler, with the class that documents their body (the OpenAPI document shows
 * it as the success schema). Give every status the handler may answer with a body: `Answers(TeamView, 200, 201)`.
 */
export const Answers = (type: Type<unknown> | [Type<unknown>], ...statuses: number[]): MethodDecorator =>
  applyDecorators(...(statuses.length > 0 ? statuses : [200]).map((status) => ApiResponse({ status, type, description: DESCRIPTIONS[status] ?? 'OK' })));

/** A property holding a string-keyed map (labels, per-flavor figures): `{ [key]: value }`. */
export const MapProperty = (values: 'string' | 'number', options: ApiPropertyOptions = {}): PropertyDecorator =>
  ApiProperty({ type: 'object', additionalProperties: { type: values }, ...options } as ApiPropertyOptions);

/** An ISO 8601 time (as every time of the API is sent). */
export const TimeProperty = (options: ApiPropertyOptions = {}): PropertyDecorator =>
  ApiProperty({ type: String, format: 'date-time', example: '2026-12-02T11:25:00.000Z', ...options });

/** A property holding a free-form JSON object (a pod template, an event's data). */
export const ObjectProperty = (options: ApiPropertyOptions = {}): PropertyDecorator =>
  ApiProperty({ type: 'object', additionalProperties: true, ...options } as ApiPropertyOptions);
