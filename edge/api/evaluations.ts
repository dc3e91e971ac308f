// The REST API's evaluations: a dataset scored against a subject (the organization's Brain
// search), queued for the evaluation workers; its results per case, and the comparison of two.
// Members start them, viewers read them; each a call to the agents service's EvaluationService.
import * as z from 'zod';
import { defineApiRoute } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import { callerOf } from './access.ts';
import { DatasetId, tags } from './evaluation-datasets.ts';
import {
  comparisonJson,
  ComparisonSchema,
  EVALUATOR_ENUM,
  EVALUATOR_NAMES,
  evaluationJson,
  EvaluationSchema,
  resultJson,
  ResultSchema,
} from './evaluation-json.ts';
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

const EvaluationId = z
  .string()
  .regex(/^evr_[A-Za-z0-9]{1,60}$/, { error: 'must be an evaluation id (evr_...)' })
  .meta({ description: 'Evaluation id.', example: 'evr_Tz8qL2mXv5Kp1aNr4Hs0' });
const evaluationParams = z.object({ organization_id: OrganizationId, evaluation_id: EvaluationId });

const SubjectSchema = z
  .object({
    type: z.literal('brain_search', { error: 'must be brain_search' }),
    limit: z.int({ error: 'must be an integer' }).min(1).max(50).optional().meta({ description: 'Results per case (default 10).' }),
  })
  .strict();
const CreateEvaluationSchema = z
  .object({
    dataset_id: DatasetId,
    subject: SubjectSchema.optional().meta({ description: "What is evaluated; default the organization's Brain search." }),
    evaluators: z
      .array(z.enum(EVALUATOR_NAMES, { error: 'must be exact, contains, regex, retrieval or llm_judge' }))
      .max(5)
      .optional()
      .meta({
        description:
          'Default: all but `llm_judge` (each scores the cases that hold its expectation). `llm_judge` asks the model of `LLM_URL` whether the answer gives `expected_answer`.',
      }),
    label: z.string().max(200).optional().meta({ description: 'What this evaluation is of (a change, a version).' }),
  })
  .strict()
  .meta({
    title: 'CreateEvaluation',
    example: { dataset_id: 'evd_Rk2mQ8xTz4Lp0aVn7Ws1', subject: { type: 'brain_search', limit: 10 }, label: 'after re-indexing' },
  });
const listQuery = pageQuery.extend({ dataset_id: DatasetId.optional().meta({ description: "Only this dataset's evaluations." }) });
const compareQuery = z.object({ base: EvaluationId.meta({ description: 'The evaluation compared against (before).' }) });
const notFound = { '404': 'NotFound' } as const;

function createEvaluationRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/evaluations',
      operationId: 'createEvaluation',
      summary: 'Start an evaluation',
      description:
        "Queues an evaluation of the dataset's cases (those it holds now): each case's input is searched in the organization's Brain and scored. Poll `getEvaluation` until `succeeded`. 409 `dataset-empty` for a dataset without cases.",
      tags,
      params: orgParams,
      responses: { '201': json(EvaluationSchema, 'The queued evaluation.'), ...errors, ...notFound, '409': 'Conflict' },
      handler: async (c) => {
        const body = await readJson(c, CreateEvaluationSchema, limit);
        const { evaluation } = await notFoundAs404(() =>
          ctx.clients.evaluation.createEvaluation({
            organizationId: c.input.params.organization_id,
            datasetId: body.dataset_id,
            subject: { kind: { case: 'brainSearch', value: { limit: body.subject?.limit ?? 0 } } },
            evaluators: (body.evaluators ?? []).map((e) => EVALUATOR_ENUM[e]),
            label: body.label ?? '',
            createdBy: callerOf(c).subject,
          }),
        );
        sendJson(c.res, 201, evaluationJson(evaluation!));
      },
    }),
    body: CreateEvaluationSchema,
    creates: true,
  };
}

function listEvaluationsRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/evaluations',
    operationId: 'listEvaluations',
    summary: 'List evaluations',
    description: "The organization's evaluations, newest first.",
    tags,
    params: orgParams,
    query: listQuery,
    responses: {
      '200': json(listEnvelope('evaluations', EvaluationSchema, 'EvaluationList'), 'One page of evaluations.'),
      ...errors,
      ...notFound,
    },
    handler: async (c) => {
      const { dataset_id: datasetId, ...page } = c.input.query;
      const res = await listing(() =>
        notFoundAs404(() =>
          ctx.clients.evaluation.listEvaluations({
            organizationId: c.input.params.organization_id,
            datasetId: datasetId ?? '',
            ...pageArgs(page),
          }),
        ),
      );
      sendPage(c, 'evaluations', res.evaluations.map(evaluationJson), res.nextPageToken);
    },
  });
}

function getEvaluationRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/evaluations/:evaluation_id',
    operationId: 'getEvaluation',
    summary: 'Get an evaluation',
    description: 'Its progress (`cases_scored` of `case_total`) and, once finished, its metrics.',
    tags,
    params: evaluationParams,
    responses: { '200': json(EvaluationSchema, 'The evaluation.'), ...errors, ...notFound },
    handler: async (c) => {
      const { organization_id: organizationId, evaluation_id: evaluationId } = c.input.params;
      const { evaluation } = await notFoundAs404(() => ctx.clients.evaluation.getEvaluation({ organizationId, evaluationId }));
      sendJson(c.res, 200, evaluationJson(evaluation!));
    },
  });
}

function listResultsRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/evaluations/:evaluation_id/results',
    operationId: 'listEvaluationResults',
    summary: "List an evaluation's results",
    description: 'One per case scored, in the order of the cases: the memories found, the rank of the first expected one, the scores.',
    tags,
    params: evaluationParams,
    query: pageQuery,
    responses: {
      '200': json(listEnvelope('results', ResultSchema, 'EvaluationResultList'), 'One page of results.'),
      ...errors,
      ...notFound,
    },
    handler: async (c) => {
      const { organization_id: organizationId, evaluation_id: evaluationId } = c.input.params;
      const res = await listing(() =>
        notFoundAs404(() => ctx.clients.evaluation.listCaseResults({ organizationId, evaluationId, ...pageArgs(c.input.query) })),
      );
      sendPage(c, 'results', res.results.map(resultJson), res.nextPageToken);
    },
  });
}

function compareRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/evaluations/:evaluation_id/comparison',
    operationId: 'compareEvaluations',
    summary: 'Compare with another evaluation',
    description:
      'This evaluation (head) against `base`, both finished (of one dataset, usually: cases are matched by id): each metric before, after and its delta, and the cases whose scores changed (improved, regressed). 409 `evaluation-not-finished` while either runs.',
    tags,
    params: evaluationParams,
    query: compareQuery,
    responses: { '200': json(ComparisonSchema, 'The comparison.'), ...errors, ...notFound, '409': 'Conflict' },
    handler: async (c) => {
      const { organization_id: organizationId, evaluation_id: head } = c.input.params;
      const base = c.input.query.base;
      const res = await notFoundAs404(() =>
        ctx.clients.evaluation.compareEvaluations({ organizationId, baseEvaluationId: base, headEvaluationId: head }),
      );
      sendJson(c.res, 200, comparisonJson(base, head, res));
    },
  });
}

export function evaluationRoutes(deps: RouteDeps): RestRoute[] {
  return [createEvaluationRoute(deps), listEvaluationsRoute(deps), getEvaluationRoute(deps), listResultsRoute(deps), compareRoute(deps)];
}
