// The integrations catalog as shipped: it loads, and every entry, given its required inputs, makes
// a server the API accepts (checked with the API's own schema); a broken catalog is refused.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCatalog, serverBodyOf } from '../../edge/api/integrations/catalog.ts';
import { CreateMcpServerSchema } from '../../edge/api/mcp-server-schemas.ts';

const SAMPLE: Record<string, string> = {
  url: 'https://mcp.example.com/',
  issuer: 'https://idp.example.com',
  authorization_endpoint: 'https://idp.example.com/authorize',
  token_endpoint: 'https://idp.example.com/token',
  client_id: 'client',
  client_secret: 'secret',
  authorization_server: 'https://auth.example.com',
};

describe('the integrations catalog', () => {
  it('makes a valid server of every entry from its required inputs', () => {
    const catalog = loadCatalog();
    expect(catalog.length).toBeGreaterThanOrEqual(6);
    for (const entry of catalog) {
      const inputs = Object.fromEntries(entry.inputs.filter((i) => i.required).map((i) => [i.name, SAMPLE[i.name]]));
      const body = CreateMcpServerSchema.safeParse(serverBodyOf(entry, { inputs }));
      expect(body.success, `${entry.name}: ${JSON.stringify(body.error?.issues)}`).toBe(true);
      if (entry.authorization === 'upstream_oauth') expect(body.data!.oauth?.client_id).toBe('client');
      if (entry.authorization === 'platform') expect(body.data!.authorization_server).toBe('platform');
    }
  });

  it('refuses a catalog with a malformed or repeated entry', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-catalog-'));
    const file = path.join(dir, 'catalog.json');
    const [first] = JSON.parse(fs.readFileSync(new URL('../../edge/api/integrations/catalog.json', import.meta.url), 'utf8')).integrations;
    fs.writeFileSync(file, JSON.stringify({ integrations: [first, first] }));
    expect(() => loadCatalog(file)).toThrow(/duplicate integration "github"/);
    fs.writeFileSync(file, JSON.stringify({ integrations: [{ ...first, authorization: 'magic' }] }));
    expect(() => loadCatalog(file)).toThrow(/integrations\.0\.authorization/);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
