// A service refuses a field with INVALID_ARGUMENT naming it ("tags[3]: must not be empty",
// services/common/rpc/validate.ts). When that field is one of the request's, the caller can fix it:
// the Agents API answers it as its documented 422 with the field's path, never as an undocumented
// 400. One mapping for every route, so that each only says where its fields are.
import { Code, ConnectError } from '@connectrpc/connect';
import { RequestValidationError } from '../http/validation.ts';

/** The service's field name, its index (`tags[3]`) and sub-fields (`relationships[0].subject`), and why. */
const FIELD_MESSAGE = /^([a-z_]+)(?:\[(\d+)\])?((?:\.[a-z_]+)*):\s*(.*)$/s;

/** Where a service's field is in the request: its own entry, or that of the longest dotted prefix mapped. */
function locate(
  fields: Record<string, (string | number)[]>,
  name: string,
  indexed: boolean,
  rest: string,
): { loc: (string | number)[]; rest: string } | undefined {
  const parts = rest.split('.').filter(Boolean);
  // An index (`tags[3]`) belongs to the field itself, so only its own entry places it.
  for (let n = indexed ? 0 : parts.length; n > 0; n--) {
    const loc = fields[[name, ...parts.slice(0, n)].join('.')];
    if (loc) return { loc, rest: parts.slice(n).join('.') };
  }
  return fields[name] ? { loc: fields[name], rest } : undefined;
}

/**
 * Runs a service call, answering its INVALID_ARGUMENT on one of `fields` (service field name to the
 * request's location, e.g. `{ tags: ['query', 'tag'] }`; a dotted name maps a nested message, e.g.
 * `{ 'subject.playbook': ['body', 'subject'] }`) as the 422 of that location.
 */
export async function requestFields<T>(fields: Record<string, (string | number)[]>, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (!(err instanceof ConnectError) || err.code !== Code.InvalidArgument) throw err;
    const match = FIELD_MESSAGE.exec(err.rawMessage);
    const found = match ? locate(fields, match[1], match[2] !== undefined, match[3]) : undefined;
    if (!match || !found) throw err;
    const [, , index, , msg] = match;
    const path = [...found.loc, ...(index === undefined ? [] : [Number(index)]), ...found.rest.split('.').filter(Boolean)];
    throw new RequestValidationError([{ type: 'value_error', loc: path, msg }]);
  }
}

/** requestFields for fields of the body: `{ interval: ['interval'] }` is the body's `interval`. */
export function bodyFields<T>(fields: Record<string, (string | number)[]>, work: () => Promise<T>): Promise<T> {
  const located = Object.fromEntries(Object.entries(fields).map(([name, loc]) => [name, ['body', ...loc]]));
  return requestFields(located, work);
}
