// A dataset's cases as JSON Lines: the import (one case per line, as addEvaluationCase takes it;
// a line that is not a valid case is reported with its number and the others are imported) and
// the export (the same lines, so an export imports back).
import { Code, ConnectError } from '@connectrpc/connect';
import * as z from 'zod';
import type { NewCase } from '../../gen/mindgate/agents/v1/evaluation_pb.js';
import { defineApiRoute } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import type { AppContext } from '../context.ts';
import { caseLine, newCaseMessage, NewCaseSchema } from './evaluation-json.ts';
import { datasetParams, tags } from './evaluation-datasets.ts';
import { errors, json, MediaTypeError, notFoundAs404, readRawBody, type RestRoute, type RouteDeps } from './rest-route.ts';

/** The largest import: about 10,000 cases of 1 KiB. */
export const MAX_IMPORT_BYTES = 10 * 1024 * 1024;
const BATCH = 500;
const MEDIA_TYPES = ['application/jsonl', 'application/x-ndjson', 'application/json-lines'];

const ImportResultSchema = z
  .object({
    imported: z.int().meta({ description: 'Cases added.' }),
    failed: z.array(z.object({ line: z.int(), detail: z.string() })).meta({ description: 'Lines not imported, with why.' }),
  })
  .meta({ title: 'EvaluationImport' });

interface Line {
  line: number;
  value: Omit<NewCase, '$typeName' | 'expectedMemories'> & { expectedMemories: { namespace: string; key: string }[] };
}
type Failure = { line: number; detail: string };

function issueText(error: z.ZodError): string {
  const issue = error.issues[0];
  const at = issue.path.join('.');
  return at === '' ? issue.message : `${at}: ${issue.message}`;
}

/** The lines that are cases, and why the others are not. */
export function parseLines(text: string): { lines: Line[]; failed: Failure[] } {
  const lines: Line[] = [];
  const failed: Failure[] = [];
  for (const [i, raw] of text.split('\n').entries()) {
    const source = raw.replace(/\r$/, '');
    if (source.trim() === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(source);
    } catch (err) {
      failed.push({ line: i + 1, detail: `not JSON: ${(err as Error).message}` });
      continue;
    }
    const result = NewCaseSchema.safeParse(parsed);
    if (!result.success) {
      failed.push({ line: i + 1, detail: issueText(result.error) });
      continue;
    }
    lines.push({ line: i + 1, value: newCaseMessage(result.data) });
  }
  return { lines, failed };
}

/** Adds the lines a batch at a time; a batch the service refuses is retried line by line to name the culprit. */
async function addLines(ctx: AppContext, organizationId: string, datasetId: string, lines: Line[], failed: Failure[]) {
  let imported = 0;
  const add = (batch: Line[]) => ctx.clients.evaluation.addCases({ organizationId, datasetId, cases: batch.map((l) => l.value) });
  for (let i = 0; i < lines.length; i += BATCH) {
    const batch = lines.slice(i, i + BATCH);
    try {
      imported += (await notFoundAs404(() => add(batch))).cases.length;
      continue;
    } catch (err) {
      if (!(err instanceof ConnectError) || (err.code !== Code.InvalidArgument && err.code !== Code.FailedPrecondition)) throw err;
    }
    for (const line of batch) {
      try {
        imported += (await add([line])).cases.length;
      } catch (err) {
        if (!(err instanceof ConnectError) || (err.code !== Code.InvalidArgument && err.code !== Code.FailedPrecondition)) throw err;
        failed.push({ line: line.line, detail: err.rawMessage.replace(/^cases\[0\]\.?/, '') });
      }
    }
  }
  return imported;
}

/** The import's body as OpenAPI states it: JSON Lines text. */
const IMPORT_BODY = {
  required: true,
  content: Object.fromEntries(
    MEDIA_TYPES.map((type) => [
      type,
      {
        schema: { type: 'string', minLength: 1 },
        example:
          '{"input":"How many connections does the checkout database pool hold?","namespace":"knowledge","expected_memories":[{"namespace":"knowledge","key":"services/checkout/db-pool"}]}\n',
      },
    ]),
  ),
};

export function importCasesRoute({ ctx }: RouteDeps): RestRoute {
  const route = defineApiRoute({
    method: 'POST',
    path: '/organizations/:organization_id/evaluation-datasets/:dataset_id/cases/import',
    operationId: 'importEvaluationCases',
    summary: 'Import cases as JSON Lines',
    description:
      'The body (`application/jsonl`, at most 10 MiB, else 413) holds one case per line, as `addEvaluationCase` takes it; blank lines are skipped. Lines that are not valid cases are answered in `failed` with their number (from 1) and the rest are imported.',
    tags,
    params: datasetParams,
    responses: {
      '200': json(ImportResultSchema, 'What was imported.'),
      ...errors,
      '404': 'NotFound',
      '408': 'RequestTimeout',
      '413': 'ContentTooLarge',
      '415': 'UnsupportedMediaType',
    },
    handler: async (c) => {
      const type = (c.req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
      if (!MEDIA_TYPES.includes(type)) throw new MediaTypeError('send the cases as application/jsonl, one JSON object per line');
      const { organization_id: organizationId, dataset_id: datasetId } = c.input.params;
      const text = (await readRawBody(c, MAX_IMPORT_BYTES)).toString('utf8');
      await notFoundAs404(() => ctx.clients.evaluation.getDataset({ organizationId, datasetId }));
      const { lines, failed } = parseLines(text);
      const imported = await addLines(ctx, organizationId, datasetId, lines, failed);
      sendJson(c.res, 200, { imported, failed: failed.sort((a, b) => a.line - b.line) });
    },
  });
  return { ...route, requestBody: IMPORT_BODY, creates: true, bodyLimit: MAX_IMPORT_BYTES };
}

export function exportCasesRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/evaluation-datasets/:dataset_id/cases/export',
    operationId: 'exportEvaluationCases',
    summary: 'Export cases as JSON Lines',
    description: 'Every case, in the order added, one per line as `importEvaluationCases` takes it, streamed.',
    tags,
    params: datasetParams,
    responses: {
      '200': { description: 'The cases, one per line.', content: { 'application/jsonl': { type: 'string' } } },
      ...errors,
      '404': 'NotFound',
    },
    handler: async (c) => {
      const { organization_id: organizationId, dataset_id: datasetId } = c.input.params;
      const page = (pageToken: string) => ctx.clients.evaluation.listCases({ organizationId, datasetId, pageSize: 1_000, pageToken });
      // The first page is read before the head is sent, so a refusal is still a problem document.
      let res = await notFoundAs404(() => page(''));
      c.res.writeHead(200, {
        'content-type': 'application/jsonl; charset=utf-8',
        'content-disposition': `attachment; filename="${datasetId}.jsonl"`,
        'cache-control': 'no-store',
      });
      try {
        for (;;) {
          const text = res.cases.map((x) => `${JSON.stringify(caseLine(x))}\n`).join('');
          if (text && !c.res.write(text)) await new Promise((resolve) => c.res.once('drain', resolve));
          if (res.nextPageToken === '' || c.res.destroyed) break;
          res = await page(res.nextPageToken);
        }
        c.res.end();
      } catch (err) {
        // Too late for a status: cut the response so the client sees an incomplete export.
        ctx.logger.warn({ err, requestId: c.requestId }, 'evaluation export cut short');
        c.res.destroy();
      }
    },
  });
}
