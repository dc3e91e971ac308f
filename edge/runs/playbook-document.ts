// The document of the playbook version a run follows, read by whichever runner works the run: the
// playbook runner for its steps, the LLM runner for the tools and namespaces it declares.
import { Code, ConnectError, type Client } from '@connectrpc/connect';
import type { PlaybooksService } from '../../gen/mindgate/agents/v1/playbooks_pb.js';
import type { Run } from '../../gen/mindgate/agents/v1/runs_pb.js';
import type { PlaybookDocument } from '../../services/common/playbooks/validate.ts';

/** The document of the playbook version a run follows, or why the run cannot have it (the version is gone). */
export async function playbookDocument(
  playbooks: Client<typeof PlaybooksService>,
  run: Run,
): Promise<{ document: PlaybookDocument } | { gone: string }> {
  try {
    const { version } = await playbooks.getPlaybookVersion({
      organizationId: run.organizationId,
      playbookId: run.playbookId,
      version: run.playbookVersion,
    });
    return { document: version!.document as unknown as PlaybookDocument };
  } catch (err) {
    if (!(err instanceof ConnectError) || (err.code !== Code.NotFound && err.code !== Code.InvalidArgument)) throw err;
    return { gone: `the run's playbook version is gone: ${err.rawMessage}` };
  }
}
