import { type ArgumentMetadata, Injectable, type PipeTransform } from '@nestjs/common';
import { AppError, isDnsLabel } from '#common';

/** A path parameter that must be a DNS-1123 label (400 otherwise). */
@Injectable()
export class NamePipe implements PipeTransform<string, string> {
  transform(value: string, metadata: ArgumentMetadata): string {
    if (!isDnsLabel(value)) {
      throw new AppError('VALIDATION_FAILED', `'${String(value).slice(0, 80)}' is not a valid ${metadata.data ?? 'name'}`, [
        { field: metadata.data ?? 'name', message: 'must be a DNS-1123 label (lower-case letters, digits and \'-\', at most 63 characters)' },
      ]);
    }
    return value;
  }
}
