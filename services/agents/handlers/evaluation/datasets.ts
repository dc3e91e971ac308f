// Datasets and their cases. A dataset's version (its etag) changes with its name and description;
// cases are numbered by an atomic per-dataset counter, which keeps them in the order added and
// lets an evaluation take "the cases up to this number" as its snapshot of the dataset.
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  AddCasesResponseSchema,
  CaseSchema,
  CreateDatasetResponseSchema,
  DatasetSchema,
  DeleteCaseResponseSchema,
  DeleteDatasetResponseSchema,
  GetDatasetResponseSchema,
  ListCasesResponseSchema,
  ListDatasetsResponseSchema,
  UpdateDatasetResponseSchema,
  type AddCasesRequest,
  type Case,
  type CreateDatasetRequest,
  type DeleteCaseRequest,
  type DeleteDatasetRequest,
  type GetDatasetRequest,
  type ListCasesRequest,
  type ListDatasetsRequest,
  type UpdateDatasetRequest,
} from '../../../../gen/mindgate/agents/v1/evaluation_pb.js';
import { failure, REASONS } from '../../../common/rpc/reasons.ts';
import { invalid, requireOrganization, requireText } from '../../../common/rpc/validate.ts';
import { findPage } from '../../../common/storage/records/paging.ts';
import { newId } from '../organizations.ts';
import { validCase } from './case-validation.ts';
import type { CaseRecord, DatasetRecord, EvaluationContext } from './records.ts';

const DATASET_ID = /^evd_[A-Za-z0-9]{1,60}$/;
const CASE_ID = /^evc_[A-Za-z0-9]{1,60}$/;
export const MAX_CASES = 10_000;
const MAX_BATCH = 500;

const requireName = (value: string) => requireText('name', value.trim(), 200, { required: true });
const requireDescription = (value: string) => requireText('description', value, 2_000);

async function toDataset(ctx: EvaluationContext, r: DatasetRecord) {
  return create(DatasetSchema, {
    datasetId: r._id,
    organizationId: r.organizationId,
    name: r.name,
    description: r.description,
    caseCount: await ctx.cases.count({ datasetId: r._id }),
    createdBy: r.createdBy,
    etag: String(r.version),
    createTime: timestampFromMs(r.createdAt),
    updateTime: timestampFromMs(r.updatedAt),
  });
}

export const toCase = (r: CaseRecord): Case =>
  create(CaseSchema, {
    caseId: r._id,
    datasetId: r.datasetId,
    input: r.input,
    alert: r.alert,
    namespace: r.namespace,
    expectedMemories: r.expectedMemories,
    expectedAnswer: r.expectedAnswer,
    answerPattern: r.answerPattern,
    labels: r.labels,
    seq: BigInt(r.seq),
    createTime: timestampFromMs(r.createdAt),
  });

/** The dataset, when it is one of the organization's; NOT_FOUND otherwise (another tenant's too). */
export async function ownedDataset(ctx: EvaluationContext, organizationId: string, datasetId: string): Promise<DatasetRecord> {
  if (!DATASET_ID.test(datasetId)) invalid('dataset_id', 'is not a dataset id');
  const dataset = await ctx.datasets.get(datasetId);
  if (!dataset || dataset.organizationId !== organizationId) throw new ConnectError(`dataset "${datasetId}" does not exist`, Code.NotFound);
  return dataset;
}

export async function createDataset(ctx: EvaluationContext, req: CreateDatasetRequest) {
  const now = ctx.now();
  const dataset: DatasetRecord = {
    _id: newId('evd'),
    organizationId: requireOrganization(req.organizationId),
    name: requireName(req.name),
    description: requireDescription(req.description),
    createdBy: req.createdBy,
    createdAt: now,
    updatedAt: now,
    version: 1,
  };
  await ctx.datasets.put(dataset, { expect: null });
  return create(CreateDatasetResponseSchema, { dataset: await toDataset(ctx, dataset) });
}

export async function getDataset(ctx: EvaluationContext, req: GetDatasetRequest) {
  const dataset = await ownedDataset(ctx, requireOrganization(req.organizationId), req.datasetId);
  return create(GetDatasetResponseSchema, { dataset: await toDataset(ctx, dataset) });
}

export async function listDatasets(ctx: EvaluationContext, req: ListDatasetsRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const page = await findPage(ctx.datasets, { organizationId }, req, {
    field: 'createdAt',
    direction: 'desc',
    scope: `datasets:${organizationId}`,
  });
  return create(ListDatasetsResponseSchema, {
    datasets: await Promise.all(page.items.map((d) => toDataset(ctx, d))),
    nextPageToken: page.nextPageToken,
  });
}

export async function updateDataset(ctx: EvaluationContext, req: UpdateDatasetRequest) {
  const current = await ownedDataset(ctx, requireOrganization(req.organizationId), req.datasetId);
  const stale = () =>
    failure('the dataset changed since it was read (If-Match): read it again', Code.FailedPrecondition, REASONS.etagMismatch);
  if (req.etag !== '' && req.etag !== String(current.version)) throw stale();
  const next: DatasetRecord = {
    ...current,
    name: req.name === undefined ? current.name : requireName(req.name),
    description: req.description === undefined ? current.description : requireDescription(req.description),
    updatedAt: ctx.now(),
    version: current.version + 1,
  };
  if (!(await ctx.datasets.put(next, { expect: { version: current.version } }))) throw stale();
  return create(UpdateDatasetResponseSchema, { dataset: await toDataset(ctx, next) });
}

export async function deleteDataset(ctx: EvaluationContext, req: DeleteDatasetRequest) {
  const dataset = await ownedDataset(ctx, requireOrganization(req.organizationId), req.datasetId);
  // The dataset first: a deletion cut short leaves unreachable cases, never a dataset missing some.
  await ctx.datasets.delete(dataset._id);
  await ctx.cases.deleteMany({ datasetId: dataset._id });
  await ctx.counters.delete(dataset._id);
  return create(DeleteDatasetResponseSchema, {});
}

export async function addCases(ctx: EvaluationContext, req: AddCasesRequest) {
  const dataset = await ownedDataset(ctx, requireOrganization(req.organizationId), req.datasetId);
  if (req.cases.length === 0 || req.cases.length > MAX_BATCH) invalid('cases', `must have 1-${MAX_BATCH} items`);
  const valid = req.cases.map((c, i) => validCase(c, `cases[${i}]`));
  const count = await ctx.cases.count({ datasetId: dataset._id });
  if (count + valid.length > MAX_CASES)
    throw failure(`a dataset holds at most ${MAX_CASES} cases; it has ${count}`, Code.FailedPrecondition, REASONS.datasetFull);
  const stored: CaseRecord[] = [];
  for (const c of valid) {
    const { count: seq } = await ctx.counters.increment(dataset._id, 'count', 1, { fields: { organizationId: dataset.organizationId } });
    const record: CaseRecord = {
      _id: newId('evc'),
      organizationId: dataset.organizationId,
      datasetId: dataset._id,
      seq,
      ...c,
      createdAt: ctx.now(),
    };
    await ctx.cases.put(record, { expect: null });
    stored.push(record);
  }
  return create(AddCasesResponseSchema, { cases: stored.map(toCase) });
}

export async function listCases(ctx: EvaluationContext, req: ListCasesRequest) {
  const dataset = await ownedDataset(ctx, requireOrganization(req.organizationId), req.datasetId);
  const page = await findPage(ctx.cases, { datasetId: dataset._id }, req, {
    field: 'seq',
    scope: `cases:${dataset._id}`,
    maxPageSize: 1_000,
  });
  return create(ListCasesResponseSchema, { cases: page.items.map(toCase), nextPageToken: page.nextPageToken });
}

export async function deleteCase(ctx: EvaluationContext, req: DeleteCaseRequest) {
  const dataset = await ownedDataset(ctx, requireOrganization(req.organizationId), req.datasetId);
  if (!CASE_ID.test(req.caseId)) invalid('case_id', 'is not a case id');
  const found = await ctx.cases.get(req.caseId);
  if (!found || found.datasetId !== dataset._id) throw new ConnectError(`case "${req.caseId}" does not exist`, Code.NotFound);
  await ctx.cases.delete(found._id);
  return create(DeleteCaseResponseSchema, {});
}
