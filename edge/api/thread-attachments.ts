// Attachments of thread messages on the REST API: references (a URI, its media type, a title, the
// size when known), under the agents service's rules (services/common/attachment-rules.ts), stated
// in the schema so a request the schema takes is one the service takes.
import type { Attachment } from '../../gen/mindgate/agents/v1/threads_pb.js';
import * as z from 'zod';
import {
  ATTACHMENT_URI,
  MAX_ATTACHMENT_SIZE,
  MAX_ATTACHMENT_TITLE,
  MAX_ATTACHMENT_URI,
  MAX_ATTACHMENTS,
  MEDIA_TYPE,
} from '../../services/common/attachment-rules.ts';

const EXAMPLE = {
  uri: 's3://ops-logs/deploys/2026-11-25/checkout-42.log',
  media_type: 'text/plain',
  title: 'Deploy 42 log',
  size_bytes: 48213,
};

const AttachmentInput = z
  .object({
    uri: z
      .string({ error: 'must be a string' })
      .max(MAX_ATTACHMENT_URI, { error: `must be at most ${MAX_ATTACHMENT_URI} characters` })
      .regex(ATTACHMENT_URI, {
        error: 'must be an absolute URI of printable ASCII (a scheme, a colon, no spaces), not data:, javascript:, vbscript: or file:',
      })
      .meta({ description: 'Where the file or page is: the platform keeps the reference, not the content.', example: EXAMPLE.uri }),
    media_type: z
      .string({ error: 'must be a string' })
      .regex(MEDIA_TYPE, { error: 'must be a media type, type/subtype in lower case (text/plain)' })
      .meta({ example: EXAMPLE.media_type }),
    title: z
      .string({ error: 'must be a string' })
      .max(MAX_ATTACHMENT_TITLE, { error: `must be at most ${MAX_ATTACHMENT_TITLE} characters` })
      .optional()
      .meta({ example: EXAMPLE.title }),
    size_bytes: z
      .int({ error: 'must be an integer' })
      .min(0, { error: 'must be at least 0' })
      .max(MAX_ATTACHMENT_SIZE, { error: `must be at most ${MAX_ATTACHMENT_SIZE}` })
      .optional()
      .meta({ description: 'Its size in bytes, when known.', example: EXAMPLE.size_bytes }),
  })
  .strict()
  .meta({ title: 'ThreadMessageAttachmentInput', example: EXAMPLE });

export const AttachmentSchema = z
  .object({
    uri: z.string(),
    media_type: z.string(),
    title: z.string().meta({ description: 'Empty when none was given.' }),
    size_bytes: z.int().nullable().meta({ description: 'Bytes, when known.' }),
  })
  .meta({ title: 'ThreadMessageAttachment', example: EXAMPLE });

export const Attachments = z
  .array(AttachmentInput, { error: 'must be an array of attachments' })
  .max(MAX_ATTACHMENTS, { error: `must have at most ${MAX_ATTACHMENTS} items` });

type AttachmentBody = z.infer<typeof AttachmentInput>;

/** The request's attachments as the service takes them. */
export const attachmentsOf = (list: AttachmentBody[] | undefined) =>
  (list ?? []).map((a) => ({
    uri: a.uri,
    mediaType: a.media_type,
    title: a.title ?? '',
    sizeBytes: a.size_bytes === undefined ? undefined : BigInt(a.size_bytes),
  }));

export const attachmentJson = (a: Attachment) => ({
  uri: a.uri,
  media_type: a.mediaType,
  title: a.title,
  size_bytes: a.sizeBytes === undefined ? null : Number(a.sizeBytes),
});
