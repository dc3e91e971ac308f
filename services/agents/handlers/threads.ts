// Threads: an organization's investigations and their messages. A thread's version (its etag)
// changes with its title and status; messages are numbered by an atomic per-thread counter (its
// own collection, so counting a message never races a thread update's compare-and-set), which
// gives them a stable order and the thread its message_count. Opening a thread and resolving it
// write thread.created and thread.resolved to the outbox with the change (putWithEvents).
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  CreateThreadResponseSchema,
  GetThreadResponseSchema,
  ListMessagesResponseSchema,
  ListThreadsResponseSchema,
  MessageRole,
  MessageSchema,
  PostMessageResponseSchema,
  ThreadSchema,
  ThreadStatus,
  UpdateThreadResponseSchema,
  type CreateThreadRequest,
  type GetThreadRequest,
  type ListMessagesRequest,
  type ListThreadsRequest,
  type Message,
  type PostMessageRequest,
  type UpdateThreadRequest,
} from '../../../gen/mindgate/agents/v1/threads_pb.js';
import { putWithEvents, type EventOutbox } from '../../common/events/outbox.ts';
import { failure, REASONS } from '../../common/rpc/reasons.ts';
import { invalid, requireOrganization, requireText } from '../../common/rpc/validate.ts';
import type { RecordCollection, RecordDoc } from '../../common/storage/records/interface.ts';
import { findPage } from '../../common/storage/records/paging.ts';
import { threadEvent, threadSubject } from '../events.ts';
import { newId } from './organizations.ts';
import { checkAttachments, toAttachment, type AttachmentRecord } from './thread-attachments.ts';
import type { ThreadMemoryRecord } from './thread-memories.ts';

export const THREAD_ID = /^thr_[A-Za-z0-9]{1,60}$/;
export const MAX_CONTENT = 100_000;

export interface ThreadRecord extends RecordDoc {
  organizationId: string;
  title: string;
  status: ThreadStatus;
  createdBy: string;
  createdAt: number;
  updatedAt: number;
  version: number;
}

export interface MessageRecord extends RecordDoc {
  organizationId: string;
  threadId: string;
  /** 1, 2, 3... within the thread, from the thread's counter. */
  seq: number;
  role: MessageRole;
  content: string;
  author: string;
  runId: string;
  toolName: string;
  /** References to files and pages (absent on messages written before attachments existed). */
  attachments?: AttachmentRecord[];
  createdAt: number;
}

/** The per-thread message counter (`_id` = the thread id). */
export interface CounterRecord extends RecordDoc {
  /** So an organization's deletion purges it with the rest. */
  organizationId: string;
  count: number;
}

export interface ThreadsContext {
  threads: RecordCollection<ThreadRecord>;
  messages: RecordCollection<MessageRecord>;
  counters: RecordCollection<CounterRecord>;
  /** The memories the threads' runs wrote to the Brain (thread-memories.ts). */
  memories: RecordCollection<ThreadMemoryRecord>;
  /** The service's outbox, which thread.* events are written to with their change. */
  events: EventOutbox;
  now: () => number;
}

async function toThread(ctx: ThreadsContext, r: ThreadRecord) {
  const counter = await ctx.counters.get(r._id);
  return create(ThreadSchema, {
    threadId: r._id,
    organizationId: r.organizationId,
    title: r.title,
    status: r.status,
    createdBy: r.createdBy,
    messageCount: counter?.count ?? 0,
    etag: String(r.version),
    createTime: timestampFromMs(r.createdAt),
    updateTime: timestampFromMs(r.updatedAt),
  });
}

export const toMessage = (r: MessageRecord): Message =>
  create(MessageSchema, {
    messageId: r._id,
    threadId: r.threadId,
    role: r.role,
    content: r.content,
    author: r.author,
    runId: r.runId,
    toolName: r.toolName,
    createTime: timestampFromMs(r.createdAt),
    attachments: (r.attachments ?? []).map(toAttachment),
  });

const requireTitle = (value: string) => requireText('title', value.trim(), 200, { required: true }).trim();

function requireStatus(status: ThreadStatus): ThreadStatus {
  if (!(status in ThreadStatus) || status === ThreadStatus.UNSPECIFIED) invalid('status', 'is not a thread status');
  return status;
}

/** The thread, when it is one of the organization's; NOT_FOUND otherwise (another tenant's too). */
export async function ownedThread(ctx: ThreadsContext, organizationId: string, threadId: string): Promise<ThreadRecord> {
  if (!THREAD_ID.test(threadId)) invalid('thread_id', 'is not a thread id');
  const thread = await ctx.threads.get(threadId);
  if (!thread || thread.organizationId !== organizationId) throw new ConnectError(`thread "${threadId}" does not exist`, Code.NotFound);
  return thread;
}

export interface NewMessage {
  role: MessageRole;
  content: string;
  author: string;
  runId?: string;
  toolName?: string;
  attachments?: AttachmentRecord[];
  /** A fixed id makes the write idempotent (a run's conclusion is posted once). */
  id?: string;
}

/** Appends a message to a thread the caller has checked; returns it as stored. */
export async function appendMessage(ctx: ThreadsContext, thread: ThreadRecord, message: NewMessage): Promise<MessageRecord> {
  if (message.id) {
    const existing = await ctx.messages.get(message.id);
    if (existing) return existing;
  }
  const { count } = await ctx.counters.increment(thread._id, 'count', 1, { fields: { organizationId: thread.organizationId } });
  const record: MessageRecord = {
    _id: message.id ?? newId('msg'),
    organizationId: thread.organizationId,
    threadId: thread._id,
    seq: count,
    role: message.role,
    content: message.content,
    author: message.author,
    runId: message.runId ?? '',
    toolName: message.toolName ?? '',
    ...(message.attachments?.length ? { attachments: message.attachments } : {}),
    createdAt: ctx.now(),
  };
  await ctx.messages.put(record);
  return record;
}

/**
 * Opens a thread with its first message. With a fixed `id` (a case of an evaluation), the thread
 * is made only if no thread has it: a second call answers the one the first made.
 */
export async function createThread(ctx: ThreadsContext, req: CreateThreadRequest, id?: string) {
  const organizationId = requireOrganization(req.organizationId);
  const title = requireTitle(req.title);
  const message = requireText('message', req.message, MAX_CONTENT);
  const now = ctx.now();
  const thread: ThreadRecord = {
    _id: id ?? newId('thr'),
    organizationId,
    title,
    status: ThreadStatus.OPEN,
    createdBy: req.createdBy,
    createdAt: now,
    updatedAt: now,
    version: 1,
  };
  const created = await putWithEvents(ctx.events, threadSubject(ctx.threads), thread, undefined, [threadEvent('thread.created', thread)], {
    expect: null,
  });
  if (!created) {
    const made = await ctx.threads.get(thread._id);
    if (made) return create(CreateThreadResponseSchema, { thread: await toThread(ctx, made) });
  }
  if (message.trim() !== '') await appendMessage(ctx, thread, { role: MessageRole.USER, content: message, author: req.createdBy });
  return create(CreateThreadResponseSchema, { thread: await toThread(ctx, thread) });
}

export async function getThread(ctx: ThreadsContext, req: GetThreadRequest) {
  const thread = await ownedThread(ctx, requireOrganization(req.organizationId), req.threadId);
  return create(GetThreadResponseSchema, { thread: await toThread(ctx, thread) });
}

export async function listThreads(ctx: ThreadsContext, req: ListThreadsRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const filter: Record<string, string | number> = { organizationId };
  if (req.status !== ThreadStatus.UNSPECIFIED) filter.status = requireStatus(req.status);
  const scope = `threads:${organizationId}:${req.status}`;
  const page = await findPage(ctx.threads, filter, req, { field: 'createdAt', direction: 'desc', scope });
  return create(ListThreadsResponseSchema, {
    threads: await Promise.all(page.items.map((t) => toThread(ctx, t))),
    nextPageToken: page.nextPageToken,
  });
}

export async function updateThread(ctx: ThreadsContext, req: UpdateThreadRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const current = await ownedThread(ctx, organizationId, req.threadId);
  const stale = () =>
    failure('the thread changed since it was read (If-Match): read it again', Code.FailedPrecondition, REASONS.etagMismatch);
  if (req.etag !== '' && req.etag !== String(current.version)) throw stale();
  const next: ThreadRecord = {
    ...current,
    title: req.title === undefined ? current.title : requireTitle(req.title),
    status: req.status === ThreadStatus.UNSPECIFIED ? current.status : requireStatus(req.status),
    updatedAt: ctx.now(),
    version: current.version + 1,
  };
  const resolved = next.status === ThreadStatus.RESOLVED && current.status !== ThreadStatus.RESOLVED;
  const events = resolved ? [threadEvent('thread.resolved', next)] : [];
  if (!(await putWithEvents(ctx.events, threadSubject(ctx.threads), next, current, events, { expect: { version: current.version } })))
    throw stale();
  return create(UpdateThreadResponseSchema, { thread: await toThread(ctx, next) });
}

export async function postMessage(ctx: ThreadsContext, req: PostMessageRequest) {
  const thread = await ownedThread(ctx, requireOrganization(req.organizationId), req.threadId);
  if (!(req.role in MessageRole) || req.role === MessageRole.UNSPECIFIED) invalid('role', 'is not a message role');
  const content = requireText('content', req.content, MAX_CONTENT, { required: true });
  const attachments = checkAttachments(req.attachments);
  const record = await appendMessage(ctx, thread, {
    role: req.role,
    content,
    author: requireText('author', req.author, 200),
    runId: requireText('run_id', req.runId, 100),
    toolName: requireText('tool_name', req.toolName, 200),
    attachments,
  });
  return create(PostMessageResponseSchema, { message: toMessage(record) });
}

export async function listMessages(ctx: ThreadsContext, req: ListMessagesRequest) {
  const thread = await ownedThread(ctx, requireOrganization(req.organizationId), req.threadId);
  const page = await findPage(ctx.messages, { threadId: thread._id }, req, { field: 'seq', scope: `messages:${thread._id}` });
  return create(ListMessagesResponseSchema, { messages: page.items.map(toMessage), nextPageToken: page.nextPageToken });
}
