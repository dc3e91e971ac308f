// The evaluation part of the agents service: its collections and the EvaluationService routes.
import type { ConnectRouter } from '@connectrpc/connect';
import { EvaluationService } from '../../../../gen/mindgate/agents/v1/evaluation_pb.js';
import type { RecordStore } from '../../../common/storage/records/interface.ts';
import { addCases, createDataset, deleteCase, deleteDataset, getDataset, listCases, listDatasets, updateDataset } from './datasets.ts';
import { claimEvaluation, completeEvaluation, recordCaseResults } from './evaluation-leases.ts';
import { compareEvaluations, createEvaluation, getEvaluation, listCaseResults, listEvaluations } from './evaluations.ts';
import type { PlaybookRunsContext } from '../playbook-runs.ts';
import { startCaseRun } from './case-runs.ts';
import { openEvaluationContext, ownedCollections } from './records.ts';

export function evaluationModule(records: RecordStore, now: () => number, playbooks?: PlaybookRunsContext) {
  const ctx = openEvaluationContext(records, now, playbooks);
  return {
    services: [EvaluationService],
    /** What an organization's deletion purges. */
    owned: ownedCollections(ctx),
    routes(router: ConnectRouter) {
      router.service(EvaluationService, {
        createDataset: (req) => createDataset(ctx, req),
        getDataset: (req) => getDataset(ctx, req),
        listDatasets: (req) => listDatasets(ctx, req),
        updateDataset: (req) => updateDataset(ctx, req),
        deleteDataset: (req) => deleteDataset(ctx, req),
        addCases: (req) => addCases(ctx, req),
        listCases: (req) => listCases(ctx, req),
        deleteCase: (req) => deleteCase(ctx, req),
        createEvaluation: (req) => createEvaluation(ctx, req),
        getEvaluation: (req) => getEvaluation(ctx, req),
        listEvaluations: (req) => listEvaluations(ctx, req),
        listCaseResults: (req) => listCaseResults(ctx, req),
        compareEvaluations: (req) => compareEvaluations(ctx, req),
        claimEvaluation: (req) => claimEvaluation(ctx, req),
        recordCaseResults: (req) => recordCaseResults(ctx, req),
        completeEvaluation: (req) => completeEvaluation(ctx, req),
        startCaseRun: (req) => startCaseRun(ctx, req),
      });
    },
  };
}
