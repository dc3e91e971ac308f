// What an evaluation evaluated, in words (a playbook by its name, linking to it), and a link to
// the run that answered one of its cases (a playbook subject), for its page and its comparisons.
import { useSession } from '../session.tsx';
import { useResource } from '../ui.tsx';
import { type Evaluation, playbookDetails, subjectText } from './evaluations.tsx';

/** What was evaluated; a playbook by its name, linking to it. */
export function Subject({ subject }: { subject: Evaluation['subject'] }) {
  const { settings, organization } = useSession();
  const id = subject.type === 'playbook' ? String(subject.playbook_id) : null;
  const playbook = useResource<{ name: string }>(id ? `/organizations/${organization.organization_id}/playbooks/${id}` : null);
  if (!id) return <>{subjectText(subject)}</>;
  return (
    <>
      the playbook <a href={`${settings.basePath}/playbooks/${id}`}>{playbook.data?.name ?? id}</a>, {playbookDetails(subject)}
    </>
  );
}

/** A link to the run that answered a case (a playbook subject). */
export function RunLink({ id }: { id: string | null }) {
  const { settings } = useSession();
  return id ? <a href={`${settings.basePath}/runs/${id}`}>{id}</a> : <>—</>;
}
