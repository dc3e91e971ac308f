// Checks a playbook document: first against the published JSON Schema (ajv), then what a schema
// cannot say: step ids are unique, a step uses only the tools and Brain namespaces the document
// declares, and its templates and conditions name declared inputs or earlier steps. Every problem
// has a JSON Pointer to where it is (`/steps/2/when/path`), so an editor can point at it.
import { Ajv, type ErrorObject } from 'ajv';
import { parsePath, templatePaths, type Condition } from './expressions.ts';
import { PLAYBOOK_SCHEMA } from './schema.ts';

export interface PlaybookProblem {
  path: string;
  message: string;
}

export interface PlaybookStep {
  id: string;
  kind: 'tool_call' | 'brain_read' | 'brain_write';
  when?: Condition;
  continue_on_error?: boolean;
  server?: string;
  tool?: string;
  arguments?: Record<string, unknown>;
  namespace?: 'episodes' | 'knowledge';
  query?: string;
  limit?: number;
  key?: string;
  title?: string;
  content?: string;
  tags?: string[];
}

export interface PlaybookInput {
  name: string;
  type: 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array';
  required?: boolean;
  description?: string;
}

export interface PlaybookDocument {
  name: string;
  description?: string;
  instructions: string;
  inputs?: PlaybookInput[];
  tools?: string[];
  namespaces?: Array<'episodes' | 'knowledge'>;
  steps?: PlaybookStep[];
  output?: string;
}

const ajv = new Ajv({ allErrors: true, strict: false });
const schemaCheck = ajv.compile(PLAYBOOK_SCHEMA);

/** The most useful message of each place ajv found wrong (its `if`/`then` noise left out). */
function schemaProblems(errors: ErrorObject[]): PlaybookProblem[] {
  const seen = new Set<string>();
  const problems: PlaybookProblem[] = [];
  for (const e of errors) {
    if (e.keyword === 'if' || e.keyword === 'oneOf') continue;
    let path = e.instancePath;
    let message = e.message ?? 'is not valid';
    if (e.keyword === 'additionalProperties') path += `/${String(e.params.additionalProperty)}`;
    if (e.keyword === 'required') path += `/${String(e.params.missingProperty)}`;
    if (e.keyword === 'additionalProperties') message = 'is not a field of this kind of step or object';
    if (e.keyword === 'required') message = 'is required';
    if (e.keyword === 'enum') message = `must be one of ${(e.params.allowedValues as unknown[]).join(', ')}`;
    const id = `${path} ${message}`;
    if (!seen.has(id)) problems.push({ path, message });
    seen.add(id);
  }
  return problems;
}

const pointer = (...parts: Array<string | number>) => parts.map((p) => `/${String(p).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');

interface Known {
  inputs: Set<string>;
  steps: Set<string>;
}

/** A problem when a path does not start with a declared input or an earlier step. */
function checkPath(text: string, where: string, known: Known): PlaybookProblem | undefined {
  const parts = parsePath(text);
  if (typeof parts === 'string') return { path: where, message: `"${text}" is not a path: ${parts}` };
  const [root, name] = parts;
  if (root === 'inputs' && typeof name === 'string' && known.inputs.has(name)) return undefined;
  if (root === 'steps' && typeof name === 'string' && known.steps.has(name)) return undefined;
  if (root === 'inputs') return { path: where, message: `"${text}" names no declared input` };
  if (root === 'steps') return { path: where, message: `"${text}" names no earlier step` };
  return { path: where, message: `"${text}" must start with inputs.<name> or steps.<id>` };
}

function checkTemplates(value: unknown, where: string, known: Known, out: PlaybookProblem[]): void {
  if (typeof value === 'string') {
    for (const path of templatePaths(value)) {
      const problem = checkPath(path, where, known);
      if (problem) out.push(problem);
    }
  } else if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) checkTemplates(v, `${where}/${i}`, known, out);
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) checkTemplates(v, `${where}${pointer(k)}`, known, out);
  }
}

function checkCondition(c: Condition, where: string, known: Known, out: PlaybookProblem[]): void {
  if ('all' in c) {
    for (const [i, x] of c.all.entries()) checkCondition(x, `${where}/all/${i}`, known, out);
  } else if ('any' in c) {
    for (const [i, x] of c.any.entries()) checkCondition(x, `${where}/any/${i}`, known, out);
  } else if ('not' in c) checkCondition(c.not, `${where}/not`, known, out);
  else {
    const problem = checkPath(c.path, `${where}/path`, known);
    if (problem) out.push(problem);
  }
}

/** Whether `server/tool` is among the declared tools (an entry ending with * is a prefix). */
export function toolAllowed(tools: string[], server: string, tool: string): boolean {
  const name = `${server}/${tool}`;
  return tools.some((t) => (t.endsWith('*') ? name.startsWith(t.slice(0, -1)) : t === name));
}

function stepProblems(doc: PlaybookDocument, step: PlaybookStep, i: number, known: Known): PlaybookProblem[] {
  const out: PlaybookProblem[] = [];
  const at = (field: string) => pointer('steps', i, field);
  if (known.steps.has(step.id)) out.push({ path: at('id'), message: `"${step.id}" is the id of an earlier step` });
  if (step.when) checkCondition(step.when, at('when'), known, out);
  if (step.kind === 'tool_call' && !toolAllowed(doc.tools ?? [], step.server ?? '', step.tool ?? '')) {
    out.push({ path: at('tool'), message: `${step.server}/${step.tool} is not among the playbook's tools` });
  }
  if (step.kind !== 'tool_call' && step.namespace && !(doc.namespaces ?? []).includes(step.namespace)) {
    out.push({ path: at('namespace'), message: `${step.namespace} is not among the playbook's namespaces` });
  }
  for (const field of ['arguments', 'query', 'key', 'title', 'content', 'tags'] as const) {
    if (step[field] !== undefined) checkTemplates(step[field], at(field), known, out);
  }
  return out;
}

/** Every problem of a document; none means it may be stored. */
export function validatePlaybook(document: unknown): PlaybookProblem[] {
  if (!schemaCheck(document)) return schemaProblems(schemaCheck.errors ?? []);
  const doc = document as PlaybookDocument;
  const problems: PlaybookProblem[] = [];
  const known: Known = { inputs: new Set(), steps: new Set() };
  (doc.inputs ?? []).forEach((input, i) => {
    if (known.inputs.has(input.name)) problems.push({ path: pointer('inputs', i, 'name'), message: `"${input.name}" is declared twice` });
    known.inputs.add(input.name);
  });
  (doc.steps ?? []).forEach((step, i) => {
    problems.push(...stepProblems(doc, step, i, known));
    known.steps.add(step.id);
  });
  if (doc.output !== undefined) checkTemplates(doc.output, '/output', known, problems);
  return problems;
}

const TYPE_CHECK: Record<PlaybookInput['type'], (v: unknown) => boolean> = {
  string: (v) => typeof v === 'string',
  number: (v) => typeof v === 'number' && Number.isFinite(v),
  integer: (v) => Number.isInteger(v),
  boolean: (v) => typeof v === 'boolean',
  object: (v) => v !== null && typeof v === 'object' && !Array.isArray(v),
  array: (v) => Array.isArray(v),
};

/** What is wrong with a run's inputs: a missing required one, a wrong type, an undeclared one. */
export function inputProblems(doc: PlaybookDocument, inputs: Record<string, unknown>): PlaybookProblem[] {
  const declared = new Map((doc.inputs ?? []).map((i) => [i.name, i]));
  const problems: PlaybookProblem[] = [];
  for (const name of Object.keys(inputs)) {
    if (!declared.has(name)) problems.push({ path: pointer(name), message: 'is not an input of the playbook' });
  }
  for (const input of declared.values()) {
    const value = inputs[input.name];
    if (value === undefined || value === null) {
      if (input.required) problems.push({ path: pointer(input.name), message: 'is required' });
    } else if (!TYPE_CHECK[input.type](value)) problems.push({ path: pointer(input.name), message: `must be of type ${input.type}` });
  }
  return problems;
}
