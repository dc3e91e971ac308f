// The part of the agents service that keeps playbooks: their records, versions, and the runs
// started from them (which go to the runs queue beside the others).
import type { ConnectRouter } from '@connectrpc/connect';
import { PlaybooksService } from '../../gen/mindgate/agents/v1/playbooks_pb.js';
import type { RecordStore } from '../common/storage/records/interface.ts';
import { startPlaybookRun } from './handlers/playbook-runs.ts';
import {
  createPlaybook,
  getPlaybook,
  getPlaybookVersion,
  importPlaybook,
  listPlaybooks,
  listPlaybookVersions,
  publishPlaybook,
  updatePlaybook,
  validatePlaybookDocument,
  type PlaybookRecord,
  type PlaybooksContext,
  type PlaybookVersionRecord,
} from './handlers/playbooks.ts';
import type { RunsContext } from './handlers/runs.ts';

export function playbooksModule(records: RecordStore, runs: () => RunsContext, now: () => number) {
  const ctx: PlaybooksContext = {
    playbooks: records.collection<PlaybookRecord>('playbooks', {
      indexes: [{ fields: ['organizationId', 'nameKey'], unique: true }, { fields: ['organizationId', 'createdAt'] }],
    }),
    versions: records.collection<PlaybookVersionRecord>('playbook_versions', {
      indexes: [{ fields: ['playbookId', 'version'] }, { fields: ['organizationId'] }],
    }),
    now,
  };
  return {
    services: [PlaybooksService],
    /** The playbooks' collections, for the parts that start playbook runs (alert rules, jobs, evaluations). */
    context: ctx,
    /** What an organization's deletion purges (versions before their playbooks). */
    owned: [ctx.versions, ctx.playbooks],
    routes(router: ConnectRouter) {
      router.service(PlaybooksService, {
        createPlaybook: (req) => createPlaybook(ctx, req),
        getPlaybook: (req) => getPlaybook(ctx, req),
        listPlaybooks: (req) => listPlaybooks(ctx, req),
        updatePlaybook: (req) => updatePlaybook(ctx, req),
        publishPlaybook: (req) => publishPlaybook(ctx, req),
        getPlaybookVersion: (req) => getPlaybookVersion(ctx, req),
        listPlaybookVersions: (req) => listPlaybookVersions(ctx, req),
        validatePlaybook: (req) => validatePlaybookDocument(req),
        importPlaybook: (req) => importPlaybook(ctx, req),
        // The runs context as the module finally has it (with the plan's run limit).
        startPlaybookRun: (req) => startPlaybookRun({ playbooks: ctx, runs: runs() }, req),
      });
    },
  };
}
