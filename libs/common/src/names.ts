/** DNS-1123 label: lower-case alphanumerics and '-', starting and ending alphanumeric, at most 63 characters. */
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const DNS_LABEL_MAX = 63;

export function isDnsLabel(value: unknown): value is string {
  return typeof value === 'string' && value.length <= DNS_LABEL_MAX && DNS_LABEL.test(value);
}

/**
 * DNS-1123 subdomain — what Kubernetes allows as a Node name (`ip-10-0-1-23.ec2.internal`): DNS-1123
 * labels joined by '.', at most 253 characters.
 */
export const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
export const DNS_SUBDOMAIN_MAX = 253;

export function isDnsSubdomain(value: unknown): value is string {
  return typeof value === 'string' && value.length <= DNS_SUBDOMAIN_MAX && DNS_SUBDOMAIN.test(value);
}
