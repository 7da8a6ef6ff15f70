/** DNS-1123 label: lower-case alphanumerics and '-', starting and ending alphanumeric, at most 63 characters. */
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const DNS_LABEL_MAX = 63;

export function isDnsLabel(value: unknown): value is string {
  return typeof value === 'string' && value.length <= DNS_LABEL_MAX && DNS_LABEL.test(value);
}
