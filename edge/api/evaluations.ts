// The REST API's evaluations: a dataset scored against a subject (the organization's Brain
// search, or a version of a playbook), queued for the evaluation workers; its results per case, and the comparison of two.
// Members start them, viewers read them; each a call to the agents service's EvaluationService.
import type { MessageInitShape } from '@bufbuild/protobuf';
import * as z from 'zod';
import type { SubjectSchema as SubjectMessageSchema } from '../../gen/mindgate/agents/v1/evaluation_pb.js';
import { defineApiRoute } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import { callerOf } from './access.ts';
import { DatasetId, tags } from './evaluation-datasets.ts';
import { PlaybookId } from './playbook-json.ts';
import { bodyFields } from './service-fields.ts';
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

const InputName = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,63}$/, { error: 'must be an input name of the playbook' })
  .meta({ example: 'question' });
const BrainSearchSubject = z
  .object({
    type: z.literal('brain_search'),
    limit: z.int({ error: 'must be an integer' }).min(1).max(50).optional().meta({ description: 'Results per case (default 10).' }),
  })
  .strict()
  .meta({ title: 'BrainSearchSubject', description: "Each case's input searched in the organization's Brain." });
const PlaybookSubject = z
  .object({
    type: z.literal('playbook'),
    playbook_id: PlaybookId,
    version: z
      .int({ error: 'must be an integer' })
      .min(1)
      .optional()
      .meta({ description: 'The version evaluated; default the one published now (the evaluation records which).' }),
    input_name: InputName.optional().meta({
      description: "The playbook's string input the case's input fills; left out, each case's input is a JSON object of the inputs.",
    }),
    alert_input_name: InputName.optional().meta({ description: "The playbook's string input the case's alert fills, when it has one." }),
    timeout_seconds: z
      .int({ error: 'must be an integer' })
      .min(1)
      .max(3_600)
      .optional()
      .meta({ description: "Each case's run is timed out after this long (default 600)." }),
  })
  .strict()
  .meta({
    title: 'PlaybookSubject',
    description:
      "Each case run through a version of the playbook (a run on a thread of its own, by the playbook runner or the LLM runner); the run's output is the answer scored, its Brain reads the memories found.",
  });
const SubjectSchema = z.discriminatedUnion('type', [BrainSearchSubject, PlaybookSubject], { error: 'must be brain_search or playbook' });
type SubjectJson = z.output<typeof SubjectSchema>;

function subjectMessage(subject: SubjectJson | undefined): MessageInitShape<typeof SubjectMessageSchema> {
  if (subject?.type !== 'playbook') return { kind: { case: 'brainSearch', value: { limit: subject?.limit ?? 0 } } };
  return {
    kind: {
      case: 'playbook',
      value: {
        playbookId: subject.playbook_id,
        version: subject.version ?? 0,
        inputName: subject.input_name ?? '',
        alertInputName: subject.alert_input_name ?? '',
        timeoutSeconds: subject.timeout_seconds ?? 0,
      },
    },
  };
}
const CreateEvaluationSchema = z
  .object({
    dataset_id: DatasetId,
    subject: SubjectSchema.optional().meta({ description: "What is evaluated; default the organization's Brain search (limit 10)." }),
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
    example: {
      dataset_id: 'evd_Rk2mQ8xTz4Lp0aVn7Ws1',
      subject: { type: 'playbook', playbook_id: 'pbk_Rq4nT8vXz2Lk9Mw3Pa7s', version: 2, input_name: 'question' },
      label: 'playbook v2',
    },
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
        "Queues an evaluation of the dataset's cases (those it holds now): each case's input is searched in the organization's Brain (`brain_search`) or run through a version of a playbook (`playbook`: one run per case, on a thread of its own, counted in the plan's runs), and scored. Poll `getEvaluation` until `succeeded`. 409 `dataset-empty` for a dataset without cases, `playbook-unpublished` for a playbook without a published version when none is named; 404 for a playbook that is not the organization's; 422 for an input name the version does not declare as a string.",
      tags,
      params: orgParams,
      responses: { '201': json(EvaluationSchema, 'The queued evaluation.'), ...errors, ...notFound, '409': 'Conflict' },
      handler: async (c) => {
        const body = await readJson(c, CreateEvaluationSchema, limit);
        const { evaluation } = await notFoundAs404(() =>
          bodyFields({ 'subject.playbook': ['subject'] }, () =>
            ctx.clients.evaluation.createEvaluation({
              organizationId: c.input.params.organization_id,
              datasetId: body.dataset_id,
              subject: subjectMessage(body.subject),
              evaluators: (body.evaluators ?? []).map((e) => EVALUATOR_ENUM[e]),
              label: body.label ?? '',
              createdBy: callerOf(c).subject,
            }),
          ),
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
