// A service refuses a field with INVALID_ARGUMENT naming it ("tags[3]: must not be empty",
// services/common/rpc/validate.ts). When that field is one of the request's, the caller can fix it:
// the Agents API answers it as its documented 422 with the field's path, never as an undocumented
// 400. One mapping for every route, so that each only says where its fields are.
import { Code, ConnectError } from '@connectrpc/connect';
import { RequestValidationError } from '../http/validation.ts';

/** The service's field name, its index (`tags[3]`) and sub-fields (`relationships[0].subject`), and why. */
const FIELD_MESSAGE = /^([a-z_]+)(?:\[(\d+)\])?((?:\.[a-z_]+)*):\s*(.*)$/s;

/**
 * Runs a service call, answering its INVALID_ARGUMENT on one of `fields` (service field name to the
 * request's location, e.g. `{ tags: ['query', 'tag'] }`) as the 422 of that location.
 */
export async function requestFields<T>(fields: Record<string, (string | number)[]>, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (!(err instanceof ConnectError) || err.code !== Code.InvalidArgument) throw err;
    const match = FIELD_MESSAGE.exec(err.rawMessage);
    const loc = match ? fields[match[1]] : undefined;
    if (!match || !loc) throw err;
    const [, , index, rest, msg] = match;
    const path = [...loc, ...(index === undefined ? [] : [Number(index)]), ...rest.split('.').filter(Boolean)];
    throw new RequestValidationError([{ type: 'value_error', loc: path, msg }]);
  }
}

/** requestFields for fields of the body: `{ interval: ['interval'] }` is the body's `interval`. */
export function bodyFields<T>(fields: Record<string, (string | number)[]>, work: () => Promise<T>): Promise<T> {
  const located = Object.fromEntries(Object.entries(fields).map(([name, loc]) => [name, ['body', ...loc]]));
  return requestFields(located, work);
}
