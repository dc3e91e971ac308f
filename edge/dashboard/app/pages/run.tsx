// One run on its own page (an evaluation's result links here): the run as the investigation shows
// it, followed live over its event stream while it is going, and the investigation it belongs to.
import { useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { useSession } from '../session.tsx';
import { Page, ProblemAlert, useAction, useResource } from '../ui.tsx';
import { type Run, RunCard } from './run-card.tsx';

export function RunPage() {
  const { settings, organization } = useSession();
  const { params } = useRoute();
  const base = `/organizations/${organization.organization_id}`;
  const [version, setVersion] = useState(0);
  const reread = () => setVersion((v) => v + 1);
  const { data: run, problem } = useResource<Run>(`${base}/runs/${encodeURIComponent(params.id)}`, version);
  const action = useAction(reread);
  return (
    <Page title={`Run ${params.id}`}>
      <p>
        <a href={`${settings.basePath}/runs`}>All runs</a>
        {run && (
          <>
            {' · '}
            <a href={`${settings.basePath}/investigations/${run.thread_id}`}>Its investigation</a>
          </>
        )}
      </p>
      <ProblemAlert problem={problem ?? action.problem} />
      <p role="status">{action.notice}</p>
      {run && <RunCard run={run} base={base} act={(what) => void action.run(what)} finished={reread} />}
    </Page>
  );
}
