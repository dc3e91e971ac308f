// A playbook as the subject of an evaluation: its version resolved when the evaluation is created
// (0 is the one published then) and the inputs a case fills checked against it; and each case's
// inputs for the playbook (case-runs.ts runs them).
import type { JsonObject } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import type { PlaybookSubject } from '../../../../gen/mindgate/agents/v1/evaluation_pb.js';
import { inputProblems, type PlaybookDocument } from '../../../common/playbooks/validate.ts';
import { failure, REASONS } from '../../../common/rpc/reasons.ts';
import { invalid } from '../../../common/rpc/validate.ts';
import type { PlaybookRunsContext } from '../playbook-runs.ts';
import { ownedPlaybook, versionOf } from '../playbooks.ts';
import type { CaseRecord, EvaluationContext, PlaybookSubjectRecord } from './records.ts';

const FIELD = 'subject.playbook';

export function playbooksOf(ctx: EvaluationContext): PlaybookRunsContext {
  if (!ctx.playbooks) throw new ConnectError('playbook evaluations are not served here', Code.Unimplemented);
  return ctx.playbooks;
}

/** A declared input of type string, or INVALID_ARGUMENT naming `field`. */
function requireStringInput(doc: PlaybookDocument, field: string, name: string): string {
  const input = (doc.inputs ?? []).find((i) => i.name === name);
  if (!input) invalid(field, `"${name}" is not an input of the playbook version`);
  if (input.type !== 'string') invalid(field, `"${name}" is of type ${input.type}: a case's text fills a string input`);
  return name;
}

/** The subject as evaluated: the playbook's, its version resolved and the input names checked against it. */
export async function playbookSubjectOf(
  ctx: EvaluationContext,
  organizationId: string,
  subject: PlaybookSubject,
): Promise<PlaybookSubjectRecord> {
  const { playbooks } = playbooksOf(ctx);
  if (subject.timeoutSeconds > 3_600) invalid(`${FIELD}.timeout_seconds`, 'must be from 1 to 3600 (0 for 600)');
  const playbook = await ownedPlaybook(playbooks, organizationId, subject.playbookId);
  if (subject.version === 0 && playbook.publishedVersion === 0)
    throw failure(
      'the playbook has no published version: publish one or name a version',
      Code.FailedPrecondition,
      REASONS.playbookUnpublished,
    );
  if (subject.version > playbook.latestVersion)
    invalid(`${FIELD}.version`, `must be from 1 to ${playbook.latestVersion} (0 for the published one)`);
  const version = await versionOf(playbooks, playbook, subject.version);
  const doc = version.document as unknown as PlaybookDocument;
  const inputName = subject.inputName === '' ? '' : requireStringInput(doc, `${FIELD}.input_name`, subject.inputName);
  const alertInputName = subject.alertInputName === '' ? '' : requireStringInput(doc, `${FIELD}.alert_input_name`, subject.alertInputName);
  if (alertInputName !== '' && alertInputName === inputName) invalid(`${FIELD}.alert_input_name`, 'must differ from input_name');
  return {
    kind: 'playbook',
    playbookId: playbook._id,
    version: version.version,
    inputName,
    alertInputName,
    timeoutSeconds: subject.timeoutSeconds === 0 ? 600 : subject.timeoutSeconds,
  };
}

/** The playbook's inputs for a case: its input (and alert) in the named inputs, or its input as a JSON object of them. */
export function caseInputs(doc: PlaybookDocument, subject: PlaybookSubjectRecord, c: CaseRecord): JsonObject {
  let inputs: JsonObject;
  if (subject.inputName !== '') inputs = { [subject.inputName]: c.input };
  else {
    let parsed: unknown;
    try {
      parsed = JSON.parse(c.input);
    } catch {
      parsed = undefined;
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
      invalid('case.input', "must be a JSON object of the playbook's inputs (or name the input it fills: input_name)");
    inputs = parsed as JsonObject;
  }
  if (subject.alertInputName !== '' && c.alert !== '') inputs[subject.alertInputName] = c.alert;
  const [problem] = inputProblems(doc, inputs);
  if (problem) invalid('case.input', `the playbook's input ${problem.path.slice(1)} ${problem.message}`);
  return inputs;
}
