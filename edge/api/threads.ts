// The REST API's threads: an organization's investigations and their messages. Members open them
// and write to them, viewers read them. Each a call to the agents service's ThreadsService.
import type { Timestamp } from '@bufbuild/protobuf/wkt';
import * as z from 'zod';
import { MessageRole, ThreadStatus, type Message, type Thread } from '../../gen/mindgate/agents/v1/threads_pb.js';
import { attachmentJson, AttachmentSchema, Attachments, attachmentsOf } from './thread-attachments.ts';
import { defineApiRoute } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import { callerOf } from './access.ts';
import { ETAG_HEADER, ifMatch, quoteEtag } from './etag.ts';
import {
  errors,
  iso,
  json,
  listEnvelope,
  listing,
  notFoundAs404,
  OrganizationId,
  orgParams,
  pageArgs,
  pageQuery,
  readJson,
  sendPage,
  type RestRoute,
  type RouteDeps,
} from './rest-route.ts';

export const ThreadId = z
  .string()
  .regex(/^thr_[A-Za-z0-9]{1,60}$/, { error: 'must be a thread id (thr_...)' })
  .meta({ description: 'Thread id.', example: 'thr_Qm8x2LkP0aZr7Tn4Vw1s' });
export const threadParams = z.object({ organization_id: OrganizationId, thread_id: ThreadId });

const STATUS_NAMES = ['open', 'resolved', 'archived'] as const;
const STATUS_ENUM: Record<(typeof STATUS_NAMES)[number], ThreadStatus> = {
  open: ThreadStatus.OPEN,
  resolved: ThreadStatus.RESOLVED,
  archived: ThreadStatus.ARCHIVED,
};
const ROLE_NAMES: Record<number, string> = { [MessageRole.USER]: 'user', [MessageRole.AGENT]: 'agent', [MessageRole.TOOL]: 'tool' };

const Title = z
  .string({ error: 'must be a string' })
  .trim()
  .min(1, { error: 'must not be empty' })
  .max(200, { error: 'must be at most 200 characters' })
  .meta({ example: 'Checkout latency above 2 s since 09:40' });
const Content = z
  .string({ error: 'must be a string' })
  .max(100_000, { error: 'must be at most 100000 characters' })
  .meta({ example: 'p99 of /checkout doubled after the 09:35 deploy. What changed?' });
const Status = z.enum(STATUS_NAMES, { error: 'must be open, resolved or archived' });

export const ThreadSchema = z
  .object({
    id: z.string().meta({ example: 'thr_Qm8x2LkP0aZr7Tn4Vw1s' }),
    organization_id: z.string(),
    title: z.string(),
    status: Status,
    created_by: z.string().meta({ description: 'The user, API key or client that opened it.' }),
    message_count: z.int(),
    created_at: z.string().nullable(),
    updated_at: z.string().nullable(),
  })
  .meta({ title: 'Thread' });

export const MessageSchema = z
  .object({
    id: z.string().meta({ example: 'msg_b2VwQ1x9LmT0aRk4Zs7n' }),
    thread_id: z.string(),
    role: z.enum(['user', 'agent', 'tool']),
    content: z.string(),
    author: z.string().meta({ description: 'A user, API key or client id; for agent messages, the executor.' }),
    run_id: z.string().nullable().meta({ description: 'The run that wrote it, for agent messages.' }),
    attachments: z.array(AttachmentSchema).meta({ description: 'Files and pages it refers to (by reference).' }),
    created_at: z.string().nullable(),
  })
  .meta({ title: 'ThreadMessage' });

const CreateThreadSchema = z
  .object({ title: Title, message: Content.optional().meta({ description: 'A first message, from the caller.' }) })
  .strict()
  .meta({ title: 'CreateThread', example: { title: 'Checkout latency above 2 s since 09:40', message: 'What changed around 09:35?' } });
const UpdateThreadSchema = z
  .object({ title: Title.optional(), status: Status.optional() })
  .strict()
  .refine((b) => b.title !== undefined || b.status !== undefined, { error: 'give title or status' })
  .meta({ title: 'UpdateThread', minProperties: 1, example: { status: 'resolved' } });
const PostMessageSchema = z
  .object({
    content: Content.regex(/\S/, { error: 'must not be empty' }),
    attachments: Attachments.optional().meta({ description: 'Files and pages the message refers to, by reference (at most 20).' }),
  })
  .strict()
  .meta({
    title: 'PostThreadMessage',
    example: {
      content: 'The deploy at 09:35 changed the payment client timeout; its log is attached.',
      attachments: [
        { uri: 's3://ops-logs/deploys/2026-11-25/checkout-42.log', media_type: 'text/plain', title: 'Deploy 42 log', size_bytes: 48213 },
      ],
    },
  });
const threadListQuery = pageQuery.extend({ status: Status.optional().meta({ description: 'Only threads in this status.' }) });

export const threadJson = (t: Thread) => ({
  id: t.threadId,
  organization_id: t.organizationId,
  title: t.title,
  status: STATUS_NAMES[t.status - 1] ?? 'open',
  created_by: t.createdBy,
  message_count: t.messageCount,
  created_at: iso(t.createTime as Timestamp | undefined),
  updated_at: iso(t.updateTime as Timestamp | undefined),
});
export const messageJson = (m: Message) => ({
  id: m.messageId,
  thread_id: m.threadId,
  role: ROLE_NAMES[m.role] ?? 'user',
  content: m.content,
  author: m.author,
  run_id: m.runId === '' ? null : m.runId,
  attachments: m.attachments.map(attachmentJson),
  created_at: iso(m.createTime as Timestamp | undefined),
});
const withEtag = (description: string) => ({ ...json(ThreadSchema, description), headers: ETAG_HEADER });
const tags = ['Investigations'];
const notFound = { '404': 'NotFound' } as const;

function createThreadRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/threads',
      operationId: 'createThread',
      summary: 'Open a thread',
      description: 'Opens an investigation (status `open`), with a first message from the caller when `message` is given.',
      tags,
      params: orgParams,
      responses: { '201': withEtag('The thread.'), ...errors },
      handler: async (c) => {
        const body = await readJson(c, CreateThreadSchema, limit);
        const { thread } = await ctx.clients.threads.createThread({
          organizationId: c.input.params.organization_id,
          title: body.title,
          message: body.message ?? '',
          createdBy: callerOf(c).subject,
        });
        sendJson(c.res, 201, threadJson(thread!), { etag: quoteEtag(thread!.etag) });
      },
    }),
    body: CreateThreadSchema,
    creates: true,
  };
}

function listThreadsRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/threads',
    operationId: 'listThreads',
    summary: 'List threads',
    description: "The organization's threads, newest first.",
    tags,
    params: orgParams,
    query: threadListQuery,
    responses: { '200': json(listEnvelope('threads', ThreadSchema, 'ThreadList'), 'One page of threads.'), ...errors },
    handler: async (c) => {
      const { status, ...page } = c.input.query;
      const res = await listing(() =>
        ctx.clients.threads.listThreads({
          organizationId: c.input.params.organization_id,
          status: status ? STATUS_ENUM[status] : ThreadStatus.UNSPECIFIED,
          ...pageArgs(page),
        }),
      );
      sendPage(c, 'threads', res.threads.map(threadJson), res.nextPageToken);
    },
  });
}

function getThreadRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/threads/:thread_id',
    operationId: 'getThread',
    summary: 'Get a thread',
    tags,
    params: threadParams,
    responses: { '200': withEtag('The thread.'), ...errors, ...notFound },
    handler: async (c) => {
      const { organization_id: organizationId, thread_id: threadId } = c.input.params;
      const { thread } = await notFoundAs404(() => ctx.clients.threads.getThread({ organizationId, threadId }));
      sendJson(c.res, 200, threadJson(thread!), { etag: quoteEtag(thread!.etag) });
    },
  });
}

function updateThreadRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'PATCH',
      path: '/organizations/:organization_id/threads/:thread_id',
      operationId: 'updateThread',
      summary: 'Change a thread',
      description: 'Renames it or moves it to `open`, `resolved` or `archived`. With If-Match, only if still at that ETag (412 otherwise).',
      tags,
      params: threadParams,
      responses: { '200': withEtag('The thread, as stored.'), ...errors, ...notFound, '412': 'PreconditionFailed' },
      handler: async (c) => {
        const etag = ifMatch(c.req.headers['if-match']);
        const body = await readJson(c, UpdateThreadSchema, limit);
        const { organization_id: organizationId, thread_id: threadId } = c.input.params;
        const status = body.status ? STATUS_ENUM[body.status] : ThreadStatus.UNSPECIFIED;
        const { thread } = await notFoundAs404(() =>
          ctx.clients.threads.updateThread({ organizationId, threadId, title: body.title, status, etag }),
        );
        sendJson(c.res, 200, threadJson(thread!), { etag: quoteEtag(thread!.etag) });
      },
    }),
    body: UpdateThreadSchema,
  };
}

function postMessageRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/threads/:thread_id/messages',
      operationId: 'postThreadMessage',
      summary: 'Write to a thread',
      description:
        'Adds a message from the caller (role `user`), with `attachments` by reference (at most 20: `uri`, `media_type`, `title`, `size_bytes`). A run started afterwards reads it.',
      tags,
      params: threadParams,
      responses: { '201': json(MessageSchema, 'The message.'), ...errors, ...notFound },
      handler: async (c) => {
        const body = await readJson(c, PostMessageSchema, limit);
        const { organization_id: organizationId, thread_id: threadId } = c.input.params;
        const { message } = await notFoundAs404(() =>
          ctx.clients.threads.postMessage({
            organizationId,
            threadId,
            role: MessageRole.USER,
            content: body.content,
            attachments: attachmentsOf(body.attachments),
            author: callerOf(c).subject,
          }),
        );
        sendJson(c.res, 201, messageJson(message!));
      },
    }),
    body: PostMessageSchema,
    creates: true,
  };
}

function listMessagesRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/threads/:thread_id/messages',
    operationId: 'listThreadMessages',
    summary: "List a thread's messages",
    description: 'Oldest first: what the caller wrote, and what runs concluded.',
    tags,
    params: threadParams,
    query: pageQuery,
    responses: {
      '200': json(listEnvelope('messages', MessageSchema, 'ThreadMessageList'), 'One page of messages.'),
      ...errors,
      ...notFound,
    },
    handler: async (c) => {
      const { organization_id: organizationId, thread_id: threadId } = c.input.params;
      const res = await listing(() =>
        notFoundAs404(() => ctx.clients.threads.listMessages({ organizationId, threadId, ...pageArgs(c.input.query) })),
      );
      sendPage(c, 'messages', res.messages.map(messageJson), res.nextPageToken);
    },
  });
}

export function threadRoutes(deps: RouteDeps): RestRoute[] {
  return [
    createThreadRoute(deps),
    listThreadsRoute(deps),
    getThreadRoute(deps),
    updateThreadRoute(deps),
    postMessageRoute(deps),
    listMessagesRoute(deps),
  ];
}
