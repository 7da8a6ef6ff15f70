import { type ArgumentMetadata, Injectable, type PipeTransform } from '@nestjs/common';
import { AppError } from '#common';
import type { PeriodKind } from '#db';
import { BUDGET_PERIODS } from './accounting.dto.js';

/** The `{period}` path parameter of a budget: day, week or month (400 otherwise). */
@Injectable()
export class PeriodPipe implements PipeTransform<string, PeriodKind> {
  transform(value: string, metadata: ArgumentMetadata): PeriodKind {
    if (!(BUDGET_PERIODS as readonly string[]).includes(value)) {
      const field = metadata.data ?? 'period';
      throw new AppError('VALIDATION_FAILED', `'${String(value).slice(0, 80)}' is not a budget period`, [{ field, message: `must be one of ${BUDGET_PERIODS.join(', ')}` }]);
    }
    return value as PeriodKind;
  }
}
