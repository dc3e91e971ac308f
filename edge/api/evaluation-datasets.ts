// The REST API's evaluation datasets and their cases, with the JSON Lines import and export.
// Members build them, viewers read them; each a call to the agents service's EvaluationService.
import * as z from 'zod';
import { defineApiRoute } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import { callerOf } from './access.ts';
import { ETAG_HEADER, ifMatch, quoteEtag } from './etag.ts';
import { caseJson, CaseSchema, datasetJson, DatasetSchema, newCaseMessage, NewCaseSchema } from './evaluation-json.ts';
import { importCasesRoute, exportCasesRoute } from './evaluation-import.ts';
import {
  errors,
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

export const DatasetId = z
  .string()
  .regex(/^evd_[A-Za-z0-9]{1,60}$/, { error: 'must be a dataset id (evd_...)' })
  .meta({ description: 'Dataset id.', example: 'evd_Rk2mQ8xTz4Lp0aVn7Ws1' });
const CaseId = z
  .string()
  .regex(/^evc_[A-Za-z0-9]{1,60}$/, { error: 'must be a case id (evc_...)' })
  .meta({ description: 'Case id.', example: 'evc_Hq3nV7pLm2Xz9aKt0Rs4' });
export const datasetParams = z.object({ organization_id: OrganizationId, dataset_id: DatasetId });
const caseParams = datasetParams.extend({ case_id: CaseId });

const Description = z.string({ error: 'must be a string' }).max(2_000, { error: 'must be at most 2000 characters' });
const DatasetName = z.string({ error: 'must be a string' }).trim().min(1, { error: 'must not be empty' }).max(200);
const CreateDatasetSchema = z
  .object({ name: DatasetName, description: Description.optional() })
  .strict()
  .meta({
    title: 'CreateEvaluationDataset',
    example: { name: 'Checkout incidents', description: 'Questions on-call asks about checkout.' },
  });
const UpdateDatasetSchema = z
  .object({ name: DatasetName.optional(), description: Description.optional() })
  .strict()
  .refine((b) => b.name !== undefined || b.description !== undefined, { error: 'give name or description' })
  .meta({ title: 'UpdateEvaluationDataset', minProperties: 1, example: { description: 'Questions on-call asked in Q3.' } });

const withEtag = (description: string) => ({ ...json(DatasetSchema, description), headers: ETAG_HEADER });
export const tags = ['Evaluation'];
const notFound = { '404': 'NotFound' } as const;

function createDatasetRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/evaluation-datasets',
      operationId: 'createEvaluationDataset',
      summary: 'Create an evaluation dataset',
      description: 'An empty dataset; add cases one by one or import them as JSON Lines.',
      tags,
      params: orgParams,
      responses: { '201': withEtag('The dataset.'), ...errors },
      handler: async (c) => {
        const body = await readJson(c, CreateDatasetSchema, limit);
        const { dataset } = await ctx.clients.evaluation.createDataset({
          organizationId: c.input.params.organization_id,
          name: body.name,
          description: body.description ?? '',
          createdBy: callerOf(c).subject,
        });
        sendJson(c.res, 201, datasetJson(dataset!), { etag: quoteEtag(dataset!.etag) });
      },
    }),
    body: CreateDatasetSchema,
    creates: true,
  };
}

function listDatasetsRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/evaluation-datasets',
    operationId: 'listEvaluationDatasets',
    summary: 'List evaluation datasets',
    description: "The organization's datasets, newest first.",
    tags,
    params: orgParams,
    query: pageQuery,
    responses: { '200': json(listEnvelope('datasets', DatasetSchema, 'EvaluationDatasetList'), 'One page of datasets.'), ...errors },
    handler: async (c) => {
      const res = await listing(() =>
        ctx.clients.evaluation.listDatasets({ organizationId: c.input.params.organization_id, ...pageArgs(c.input.query) }),
      );
      sendPage(c, 'datasets', res.datasets.map(datasetJson), res.nextPageToken);
    },
  });
}

function getDatasetRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/evaluation-datasets/:dataset_id',
    operationId: 'getEvaluationDataset',
    summary: 'Get an evaluation dataset',
    tags,
    params: datasetParams,
    responses: { '200': withEtag('The dataset.'), ...errors, ...notFound },
    handler: async (c) => {
      const { organization_id: organizationId, dataset_id: datasetId } = c.input.params;
      const { dataset } = await notFoundAs404(() => ctx.clients.evaluation.getDataset({ organizationId, datasetId }));
      sendJson(c.res, 200, datasetJson(dataset!), { etag: quoteEtag(dataset!.etag) });
    },
  });
}

function updateDatasetRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'PATCH',
      path: '/organizations/:organization_id/evaluation-datasets/:dataset_id',
      operationId: 'updateEvaluationDataset',
      summary: 'Change an evaluation dataset',
      description: 'Renames it or changes its description. With If-Match, only if still at that ETag (412 otherwise).',
      tags,
      params: datasetParams,
      responses: { '200': withEtag('The dataset, as stored.'), ...errors, ...notFound, '412': 'PreconditionFailed' },
      handler: async (c) => {
        const etag = ifMatch(c.req.headers['if-match']);
        const body = await readJson(c, UpdateDatasetSchema, limit);
        const { organization_id: organizationId, dataset_id: datasetId } = c.input.params;
        const { dataset } = await notFoundAs404(() =>
          ctx.clients.evaluation.updateDataset({ organizationId, datasetId, name: body.name, description: body.description, etag }),
        );
        sendJson(c.res, 200, datasetJson(dataset!), { etag: quoteEtag(dataset!.etag) });
      },
    }),
    body: UpdateDatasetSchema,
  };
}

function deleteDatasetRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'DELETE',
    path: '/organizations/:organization_id/evaluation-datasets/:dataset_id',
    operationId: 'deleteEvaluationDataset',
    summary: 'Delete an evaluation dataset',
    description: 'Deletes the dataset and its cases; evaluations of it keep their results.',
    tags,
    params: datasetParams,
    responses: { '204': { description: 'Deleted.' }, ...errors, ...notFound },
    handler: async (c) => {
      const { organization_id: organizationId, dataset_id: datasetId } = c.input.params;
      await notFoundAs404(() => ctx.clients.evaluation.deleteDataset({ organizationId, datasetId }));
      c.res.writeHead(204).end();
    },
  });
}

function addCaseRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/evaluation-datasets/:dataset_id/cases',
      operationId: 'addEvaluationCase',
      summary: 'Add a case',
      description:
        'A query (`input`, with an optional `alert`) and what it should give: memories to find, an answer, a pattern (RE2) the answer matches. 409 `dataset-full` past 10,000 cases.',
      tags,
      params: datasetParams,
      responses: { '201': json(CaseSchema, 'The case.'), ...errors, ...notFound, '409': 'Conflict' },
      handler: async (c) => {
        const body = await readJson(c, NewCaseSchema, limit);
        const { organization_id: organizationId, dataset_id: datasetId } = c.input.params;
        const { cases } = await notFoundAs404(() =>
          ctx.clients.evaluation.addCases({ organizationId, datasetId, cases: [newCaseMessage(body)] }),
        );
        sendJson(c.res, 201, caseJson(cases[0]));
      },
    }),
    body: NewCaseSchema,
    creates: true,
  };
}

function listCasesRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/evaluation-datasets/:dataset_id/cases',
    operationId: 'listEvaluationCases',
    summary: "List a dataset's cases",
    description: 'In the order added.',
    tags,
    params: datasetParams,
    query: pageQuery,
    responses: { '200': json(listEnvelope('cases', CaseSchema, 'EvaluationCaseList'), 'One page of cases.'), ...errors, ...notFound },
    handler: async (c) => {
      const { organization_id: organizationId, dataset_id: datasetId } = c.input.params;
      const res = await listing(() =>
        notFoundAs404(() => ctx.clients.evaluation.listCases({ organizationId, datasetId, ...pageArgs(c.input.query) })),
      );
      sendPage(c, 'cases', res.cases.map(caseJson), res.nextPageToken);
    },
  });
}

function deleteCaseRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'DELETE',
    path: '/organizations/:organization_id/evaluation-datasets/:dataset_id/cases/:case_id',
    operationId: 'deleteEvaluationCase',
    summary: 'Delete a case',
    tags,
    params: caseParams,
    responses: { '204': { description: 'Deleted.' }, ...errors, ...notFound },
    handler: async (c) => {
      const { organization_id: organizationId, dataset_id: datasetId, case_id: caseId } = c.input.params;
      await notFoundAs404(() => ctx.clients.evaluation.deleteCase({ organizationId, datasetId, caseId }));
      c.res.writeHead(204).end();
    },
  });
}

export function evaluationDatasetRoutes(deps: RouteDeps): RestRoute[] {
  return [
    createDatasetRoute(deps),
    listDatasetsRoute(deps),
    getDatasetRoute(deps),
    updateDatasetRoute(deps),
    deleteDatasetRoute(deps),
    addCaseRoute(deps),
    listCasesRoute(deps),
    deleteCaseRoute(deps),
    importCasesRoute(deps),
    exportCasesRoute(deps),
  ];
}
