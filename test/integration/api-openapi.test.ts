// The Agents API's OpenAPI document is complete: a valid OpenAPI 3.1 document; every operation
// answers a typed JSON schema (no bare `object`), with an example that the schema accepts, and so
// does every request body; every operation declares the problems it can answer beyond its own
// (408/413/415 with a body, 401/503/504 when authenticated, 429 too under the organization's rate
// limits, which every operation signed in with a token or key has, 500 always), each with an example.
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';

type Json = Record<string, any>;
let platform: TestPlatform;
let doc: Json;

beforeAll(async () => {
  platform = await startTestPlatform();
  doc = (await (await fetch(`${platform.urls.api}/openapi.json`)).json()) as Json;
}, 60_000);

afterAll(async () => {
  await platform?.stop();
});

const operations = () =>
  Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, op })),
  );
const resolve = (r: Json): Json => (r.$ref ? doc.components.responses[r.$ref.split('/').pop()] : r);

describe('the OpenAPI document of the Agents API', () => {
  it('is a valid OpenAPI 3.1 document at version 1.x', async () => {
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.info.version).toMatch(/^1\./);
  });

  it('gives every operation a typed success response and every JSON body an example its schema accepts', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    ajv.addSchema({ $id: 'https://mindgate.test/openapi.json', components: doc.components });
    const check = (where: string, media: Json) => {
      expect(media.schema, where).toBeDefined();
      const schema = media.schema.$ref ? doc.components.schemas[media.schema.$ref.split('/').pop()] : media.schema;
      // An object, an array, or a choice of them (a body that takes one of two shapes).
      expect(schema.properties ?? schema.items ?? schema.anyOf, `${where}: a typed schema`).toBeDefined();
      expect(media.example, `${where}: an example`).toBeDefined();
      const validate = ajv.compile(media.schema.$ref ? { $ref: `https://mindgate.test/openapi.json${media.schema.$ref}` } : media.schema);
      expect(validate(media.example) ? [] : validate.errors, `${where}: the example is valid`).toEqual([]);
    };
    for (const { name, op } of operations()) {
      const success = Object.entries(op.responses as Record<string, Json>).filter(([status]) => status.startsWith('2'));
      expect(success.length, name).toBeGreaterThan(0);
      for (const [status, response] of success) {
        const json = resolve(response).content?.['application/json'];
        if (json) check(`${name} ${status}`, json);
        else {
          // The non-JSON successes: no content, JSON Lines (exports), or an event stream (progress).
          const content = resolve(response).content ?? {};
          expect(status === '204' || content['application/jsonl'] || content['text/event-stream'], `${name} ${status}`).toBeTruthy();
        }
      }
      if (op.requestBody?.content['application/json']) check(`${name} request body`, op.requestBody.content['application/json']);
      // A body that is not JSON at all (a JSON Lines import): text, with an example.
      else if (op.requestBody)
        for (const media of Object.values(op.requestBody.content as Record<string, Json>)) expect(media.example, name).toBeTruthy();
    }
    for (const [name, response] of Object.entries(doc.components.responses as Record<string, Json>)) {
      check(`response ${name}`, response.content['application/problem+json']);
    }
  });

  it('declares the problems an operation can answer beyond its own', () => {
    for (const { name, op } of operations()) {
      const statuses = Object.keys(op.responses);
      expect(statuses, name).toContain('500');
      if (op.security?.length) expect(statuses, name).toEqual(expect.arrayContaining(['401', '503', '504']));
      // An alert source's receive URL is authenticated by the source's secret, outside the rate limits.
      if (op.security?.some((s: Json) => 'BearerToken' in s)) expect(statuses, name).toContain('429');
      if (op.requestBody) expect(statuses, name).toEqual(expect.arrayContaining(['408', '413', '415', '422']));
    }
    const metadata = doc.paths['/.well-known/oauth-protected-resource'].get.responses['200'].content['application/json'];
    expect(doc.components.schemas[metadata.schema.$ref.split('/').pop()].required).toEqual(
      expect.arrayContaining(['resource', 'authorization_servers']),
    );
  });
});
