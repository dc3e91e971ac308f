// Schemas of the Web API: query validation and response bodies. The OpenAPI document is
// generated from these very objects (edge/http/openapi.ts).
import * as z from 'zod';
import { integerParam } from '../http/api-route.ts';
import { CATEGORIES } from './content.ts';

const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

const category = z
  .enum(CATEGORIES, { error: `must be one of ${CATEGORIES.join(', ')}` })
  .optional()
  .meta({ description: 'Only posts of this category.' });

export const listQuery = z.object({
  limit: integerParam({ min: 1, max: 100, default: 20, description: 'Posts per page.' }),
  cursor: z
    .string()
    .max(200, { error: 'is not a cursor this API issued' })
    .regex(/^[A-Za-z0-9_-]*$/, { error: 'is not a cursor this API issued' })
    .optional()
    .meta({ description: 'The `next_cursor` of the previous page; absent for the first page.' }),
  category,
});

export const postParams = z.object({
  slug: z.string().meta({ description: "The post's slug, as in `/blog/{slug}`." }),
});

export const searchQuery = z.object({
  q: z
    .string({ error: 'is required: the text to search for' })
    .trim()
    .min(1, { error: 'must not be empty' })
    .max(200, { error: 'must be at most 200 characters' })
    .refine((q) => !CONTROL_CHARS.test(q), { error: 'must not contain control characters' })
    .meta({
      description: 'What to search for, in words (1 to 200 characters).',
      // What trim() and the refinement check, stated for clients: a non-space, no control characters.
      pattern: '^[^\\u0000-\\u001f\\u007f]*[^\\s\\u0000-\\u001f\\u007f][^\\u0000-\\u001f\\u007f]*$',
    }),
  limit: integerParam({ min: 1, max: 50, default: 10, description: 'Most results to return.' }),
  category,
});

const links = z.object({
  html: z.url().meta({ description: 'The post on the site.' }),
  markdown: z.url().meta({ description: 'Its Markdown twin.' }),
  api: z.url().meta({ description: 'The post in this API, with its full text.' }),
});

export const agentNotes = z.object({
  summary: z.string().meta({ description: 'What the post gives an agent, in a few sentences.' }),
  when_to_use: z.array(z.string()).meta({ description: 'Situations in which the post is worth reading.' }),
  key_claims: z.array(z.string()).meta({ description: 'The facts the post states, one per item.' }),
  related_concepts: z.array(z.string()),
});

export const postSummary = z.object({
  slug: z.string(),
  title: z.string(),
  date: z.iso.date().meta({ description: 'Publication date.' }),
  updated: z.iso.date().nullable().meta({ description: 'Last substantive update, if any.' }),
  category: z.enum(CATEGORIES),
  author: z.string(),
  summary: z.string(),
  tags: z.array(z.string()),
  reading_time_minutes: z.number().int(),
  agent: agentNotes,
  links,
});

export const postFull = postSummary.extend({
  content_markdown: z.string().meta({ description: 'The full text, in Markdown.' }),
  content_html: z.string().meta({ description: 'The full text, rendered to HTML.' }),
  sections: z.array(z.object({ heading: z.string(), anchor: z.string(), url: z.url() })),
});

export const postList = z.object({
  data: z.array(postSummary),
  pagination: z.object({
    limit: z.number().int(),
    total: z.number().int().meta({ description: 'Posts matching the filter, on every page.' }),
    next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last one.' }),
  }),
});

export const searchResponse = z.object({
  query: z.string(),
  mode: z.enum(['hybrid', 'lexical']).meta({
    description: '`hybrid`: words and meaning; `lexical`: words only (the embedding model was unavailable).',
  }),
  total: z.number().int().meta({ description: 'Posts that matched, before the limit.' }),
  results: z.array(
    z.object({
      slug: z.string(),
      title: z.string(),
      date: z.iso.date(),
      category: z.enum(CATEGORIES),
      summary: z.string(),
      agent_summary: z.string(),
      score: z.number().meta({ description: 'Fused relevance; comparable within one response only.' }),
      scores: z.object({
        lexical: z.number().meta({ description: 'BM25 relative to the best match, 0 to 1.' }),
        semantic: z.number().meta({ description: 'Cosine similarity of sentence embeddings, -1 to 1.' }),
      }),
      section: z
        .object({ heading: z.string(), url: z.url() })
        .nullable()
        .meta({ description: 'The section of the post that matched best.' }),
      links,
    }),
  ),
});

export const componentHealth = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.enum(['service', 'store']),
  status: z.enum(['operational', 'degraded', 'outage']),
  latency_ms: z.number().meta({ description: 'How long the check took.' }),
  critical: z.boolean().meta({ description: 'An outage of this component is a major outage.' }),
  detail: z.string().optional(),
});

export const platformStatus = z.object({
  status: z.enum(['operational', 'degraded', 'major_outage']),
  description: z.string(),
  checked_at: z.iso.datetime(),
  components: z.array(componentHealth),
});

export const apiIndex = z.object({
  name: z.string(),
  version: z.string(),
  description: z.string(),
  openapi: z.url(),
  operations: z.array(
    z.object({
      method: z.string(),
      path: z.string(),
      summary: z.string(),
      policy: z.string().nullable(),
      deprecated: z.boolean(),
    }),
  ),
  policies: z.array(z.object({ name: z.string(), quota: z.number().int(), window_seconds: z.number().int() })),
});

export const problem = z.object({
  type: z.string().meta({ description: 'A URI that identifies the problem type.' }),
  title: z.string(),
  status: z.number().int(),
  detail: z.string().optional(),
  instance: z.string().optional(),
  'invalid-params': z
    .array(z.object({ name: z.string(), in: z.enum(['path', 'query', 'body']), reason: z.string() }))
    .optional()
    .meta({ description: 'Each invalid parameter, with the reason (400 only).' }),
  'violated-policies': z.array(z.string()).optional().meta({ description: 'The rate-limit policies exceeded (429 only).' }),
});
