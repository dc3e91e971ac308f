import { Code, ConnectError } from '@connectrpc/connect';

/** Throws INVALID_ARGUMENT naming the field, the message a caller needs to fix the request. */
export function invalid(field: string, problem: string): never {
  throw new ConnectError(`${field}: ${problem}`, Code.InvalidArgument);
}

export const ORGANIZATION_ID = /^[A-Za-z0-9_-]{1,64}$/;

export function requireOrganization(value: string): string {
  if (!value) invalid('organization_id', 'is required');
  if (!ORGANIZATION_ID.test(value)) invalid('organization_id', 'must be 1-64 characters of [A-Za-z0-9_-]');
  return value;
}

export function requireText(field: string, value: string, max: number, options: { required?: boolean } = {}): string {
  if (options.required && value.trim() === '') invalid(field, 'is required');
  if (value.length > max) invalid(field, `must be at most ${max} characters, got ${value.length}`);
  return value;
}

export function requireList(field: string, values: string[], maxItems: number, maxLength: number): string[] {
  if (values.length > maxItems) invalid(field, `must have at most ${maxItems} items, got ${values.length}`);
  const out: string[] = [];
  for (const [i, raw] of values.entries()) {
    const value = raw.trim();
    if (value === '') invalid(`${field}[${i}]`, 'must not be empty');
    if (value.length > maxLength) invalid(`${field}[${i}]`, `must be at most ${maxLength} characters`);
    if (!out.includes(value)) out.push(value);
  }
  return out;
}
