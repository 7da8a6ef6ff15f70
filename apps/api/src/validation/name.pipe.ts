import { type ArgumentMetadata, Injectable, type PipeTransform } from '@nestjs/common';
import { AppError, isDnsLabel, isDnsSubdomain } from '#common';

function check(value: string, metadata: ArgumentMetadata, valid: (value: string) => boolean, rule: string): string {
  if (!valid(value)) {
    throw new AppError('VALIDATION_FAILED', `'${String(value).slice(0, 80)}' is not a valid ${metadata.data ?? 'name'}`, [{ field: metadata.data ?? 'name', message: rule }]);
  }
  return value;
}

/** A path parameter that must be a DNS-1123 label (400 otherwise): flavors, cohorts, teams. */
@Injectable()
export class NamePipe implements PipeTransform<string, string> {
  transform(value: string, metadata: ArgumentMetadata): string {
    return check(value, metadata, isDnsLabel, 'must be a DNS-1123 label (lower-case letters, digits and \'-\', at most 63 characters)');
  }
}

/** A node name: a DNS-1123 subdomain, as Kubernetes allows for Nodes (`ip-10-0-1-23.ec2.internal`). */
@Injectable()
export class NodeNamePipe implements PipeTransform<string, string> {
  transform(value: string, metadata: ArgumentMetadata): string {
    return check(value, metadata, isDnsSubdomain, 'must be a DNS-1123 subdomain (lower-case letters, digits, \'-\' and \'.\', each dot-separated part starting and ending with a letter or digit, at most 253 characters)');
  }
}
