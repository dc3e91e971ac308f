// The JSON Schema of a playbook document: what the agents service checks every version against
// (validate.ts) and what the Agents API publishes (`GET /schemas/playbook.json`), so an editor or a
// CI job can check a playbook before it is imported.

const ID = '^[a-z][a-z0-9_]{0,63}$';

const condition = {
  description:
    'True when the value at `path` (inputs.<name> or steps.<id>.ok / .result…) passes every test given; or all / any / not of conditions.',
  oneOf: [
    {
      type: 'object',
      properties: {
        path: { type: 'string', minLength: 1, maxLength: 500 },
        equals: {},
        not_equals: {},
        contains: {},
        exists: { type: 'boolean' },
      },
      required: ['path'],
      additionalProperties: false,
    },
    {
      type: 'object',
      properties: { all: { type: 'array', minItems: 1, maxItems: 20, items: { $ref: '#/definitions/condition' } } },
      required: ['all'],
      additionalProperties: false,
    },
    {
      type: 'object',
      properties: { any: { type: 'array', minItems: 1, maxItems: 20, items: { $ref: '#/definitions/condition' } } },
      required: ['any'],
      additionalProperties: false,
    },
    {
      type: 'object',
      properties: { not: { $ref: '#/definitions/condition' } },
      required: ['not'],
      additionalProperties: false,
    },
  ],
};

const common = {
  id: { type: 'string', pattern: ID, description: 'Unique in the playbook; later steps name its result as steps.<id>.' },
  when: { $ref: '#/definitions/condition', description: 'The step runs only when this holds; otherwise it is recorded as skipped.' },
  continue_on_error: { type: 'boolean', description: 'A failed step does not fail the run.' },
};

const namespace = { type: 'string', enum: ['episodes', 'knowledge'] };

const step = {
  type: 'object',
  required: ['id', 'kind'],
  properties: { kind: { type: 'string', enum: ['tool_call', 'brain_read', 'brain_write'] } },
  allOf: [
    {
      if: { properties: { kind: { const: 'tool_call' } } },
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then keywords, not a thenable
      then: {
        properties: {
          ...common,
          kind: {},
          server: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,100}$', description: "An MCP server of the organization's gateway." },
          tool: { type: 'string', minLength: 1, maxLength: 200 },
          arguments: { type: 'object', description: 'The tool arguments; strings may hold {{ path }} templates.' },
        },
        required: ['server', 'tool'],
        additionalProperties: false,
      },
    },
    {
      if: { properties: { kind: { const: 'brain_read' } } },
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then keywords, not a thenable
      then: {
        properties: {
          ...common,
          kind: {},
          namespace,
          query: { type: 'string', minLength: 1, maxLength: 4000 },
          limit: { type: 'integer', minimum: 1, maximum: 50 },
        },
        required: ['namespace', 'query'],
        additionalProperties: false,
      },
    },
    {
      if: { properties: { kind: { const: 'brain_write' } } },
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then keywords, not a thenable
      then: {
        properties: {
          ...common,
          kind: {},
          namespace,
          key: { type: 'string', minLength: 1, maxLength: 200 },
          title: { type: 'string', maxLength: 500 },
          content: { type: 'string', minLength: 1, maxLength: 32000 },
          tags: { type: 'array', maxItems: 20, items: { type: 'string', minLength: 1, maxLength: 100 } },
        },
        required: ['namespace', 'key', 'content'],
        additionalProperties: false,
      },
    },
  ],
};

export const PLAYBOOK_SCHEMA_ID = 'https://mindgate.dev/schemas/playbook.json';

export const PLAYBOOK_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: PLAYBOOK_SCHEMA_ID,
  title: 'Mindgate playbook',
  description: 'A procedure an agent follows: instructions, inputs, the tools and Brain namespaces it may use, and optional steps.',
  type: 'object',
  required: ['name', 'instructions'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S' },
    description: { type: 'string', maxLength: 2000 },
    instructions: { type: 'string', minLength: 1, maxLength: 20000, description: 'Markdown: what the agent is to do.' },
    inputs: {
      type: 'array',
      maxItems: 50,
      items: {
        type: 'object',
        required: ['name', 'type'],
        additionalProperties: false,
        properties: {
          name: { type: 'string', pattern: ID },
          type: { type: 'string', enum: ['string', 'number', 'integer', 'boolean', 'object', 'array'] },
          required: { type: 'boolean' },
          description: { type: 'string', maxLength: 1000 },
        },
      },
    },
    tools: {
      type: 'array',
      maxItems: 100,
      uniqueItems: true,
      description: 'MCP tools it may call, as server/tool; a tool ending with * is a prefix.',
      items: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,100}/[A-Za-z0-9._-]{0,200}\\*?$' },
    },
    namespaces: { type: 'array', uniqueItems: true, maxItems: 2, items: namespace, description: 'Brain namespaces it may read and write.' },
    steps: { type: 'array', maxItems: 100, items: { $ref: '#/definitions/step' } },
    output: {
      type: 'string',
      maxLength: 20000,
      description: 'Markdown posted to the thread when the steps are done; may hold {{ path }} templates.',
    },
  },
  definitions: { condition, step },
} as const;
