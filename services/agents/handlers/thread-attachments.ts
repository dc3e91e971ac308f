// Attachments of thread messages, by reference: a URI to a file or page kept elsewhere (a log in a
// bucket, a dashboard, a ticket), with its media type, a title and its size when known. The
// platform stores the reference, never the content, so the only checks are of the reference
// itself (services/common/attachment-rules.ts).
import { create } from '@bufbuild/protobuf';
import { AttachmentSchema, type Attachment } from '../../../gen/mindgate/agents/v1/threads_pb.js';
import { MAX_ATTACHMENT_SIZE, MAX_ATTACHMENT_TITLE, MAX_ATTACHMENTS, MEDIA_TYPE, uriProblem } from '../../common/attachment-rules.ts';
import { invalid } from '../../common/rpc/validate.ts';

export interface AttachmentRecord {
  uri: string;
  mediaType: string;
  title: string;
  /** Bytes, when known. */
  size?: number;
}

function checkOne(a: Attachment, field: string): AttachmentRecord {
  const uri = a.uri;
  const problem = uriProblem(uri);
  if (problem) invalid(`${field}.uri`, problem);
  const mediaType = a.mediaType;
  if (!MEDIA_TYPE.test(mediaType)) invalid(`${field}.media_type`, 'must be a media type, type/subtype in lower case (text/plain)');
  if (a.title.length > MAX_ATTACHMENT_TITLE) invalid(`${field}.title`, `must be at most ${MAX_ATTACHMENT_TITLE} characters`);
  if (a.sizeBytes !== undefined && a.sizeBytes > BigInt(MAX_ATTACHMENT_SIZE))
    invalid(`${field}.size_bytes`, `must be at most ${MAX_ATTACHMENT_SIZE}`);
  return {
    uri,
    mediaType,
    title: a.title,
    ...(a.sizeBytes === undefined ? {} : { size: Number(a.sizeBytes) }),
  };
}

/** The attachments as stored; INVALID_ARGUMENT naming the field (attachments[2].uri) for a bad one. */
export function checkAttachments(attachments: Attachment[]): AttachmentRecord[] {
  if (attachments.length > MAX_ATTACHMENTS) invalid('attachments', `must have at most ${MAX_ATTACHMENTS} items, got ${attachments.length}`);
  return attachments.map((a, i) => checkOne(a, `attachments[${i}]`));
}

export const toAttachment = (r: AttachmentRecord): Attachment =>
  create(AttachmentSchema, {
    uri: r.uri,
    mediaType: r.mediaType,
    title: r.title,
    sizeBytes: r.size === undefined ? undefined : BigInt(r.size),
  });
