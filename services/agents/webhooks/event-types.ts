import { create } from '@bufbuild/protobuf';
import { EventTypeSchema, ListEventTypesResponseSchema } from '../../../gen/mindgate/agents/v1/webhooks_pb.js';
import { EVENT_TYPES, eventSchemas } from '../../common/events/catalogue.ts';

/** The event catalogue with each type's JSON Schema, sorted by type. */
export function listEventTypes() {
  const schemas = eventSchemas();
  const types = Object.entries(EVENT_TYPES)
    .map(([type, entry]) => create(EventTypeSchema, { type, description: entry.description, schemaJson: schemas.get(type)! }))
    .sort((a, b) => (a.type < b.type ? -1 : 1));
  return create(ListEventTypesResponseSchema, { eventTypes: types });
}
