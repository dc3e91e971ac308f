// Errors every records implementation throws, so that callers can tell a bad request from a
// conflict without knowing which store is behind the port.

/** Base class of the errors below; anything else thrown by a store is an infrastructure fault. */
export class RecordStoreError extends Error {
  static readonly errorCode: string = 'record_store_error';
  get errorCode(): string {
    return (this.constructor as typeof RecordStoreError).errorCode;
  }
}

/** A filter, find option, `expect` or index specification the port does not accept. */
export class InvalidFilterError extends RecordStoreError {
  static override readonly errorCode = 'invalid_filter';
  constructor(message: string) {
    super(message);
    this.name = 'InvalidFilterError';
  }
}

/**
 * A document the port cannot store (not plain JSON, reserved field names, bad `_id` or
 * `expiresAt`), or an `increment` of a field that holds something other than a number.
 */
export class InvalidRecordError extends RecordStoreError {
  static override readonly errorCode = 'invalid_record';
  constructor(message: string) {
    super(message);
    this.name = 'InvalidRecordError';
  }
}

/** A `put` whose document would duplicate the key of a unique index in its collection. */
export class UniqueViolationError extends RecordStoreError {
  static override readonly errorCode = 'unique_violation';
  readonly collection: string;
  /** Fields of the violated index, when the store could tell which index it was. */
  readonly fields: string[] | undefined;
  /** `id` is the record being written, or undefined when a new index meets existing duplicates. */
  constructor(collection: string, id: string | undefined, fields: string[] | undefined) {
    const on = fields ? ` on (${fields.join(', ')})` : '';
    super(
      id === undefined
        ? `records in "${collection}" already duplicate the key of the new unique index${on}`
        : `record "${id}" in "${collection}" duplicates the key of a unique index${on}`,
    );
    this.name = 'UniqueViolationError';
    this.collection = collection;
    this.fields = fields;
  }
}

/** Any use of a store after `close()`. */
export class StoreClosedError extends RecordStoreError {
  static override readonly errorCode = 'store_closed';
  constructor() {
    super('the record store is closed');
    this.name = 'StoreClosedError';
  }
}

export function isRecordStoreError(error: unknown): error is RecordStoreError {
  return error instanceof RecordStoreError;
}
