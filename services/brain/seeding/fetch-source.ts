// The URL source: fetching one page for a seeding run, only where the deployment allows it. The
// host must be one SEEDING_URL_HOSTS names (or it says `*`), and the outbound address policy of
// webhooks and the gateway applies (services/common/net/address-policy.ts): the name is checked
// when the run starts and pinned again at the connection, so loopback, private, link-local and
// metadata addresses are refused unless SEEDING_ALLOW_PRIVATE_URLS is set. Redirects are not
// followed (they could lead anywhere). The page must be HTML (its main content is converted),
// Markdown, plain text or JSON Lines, at most MAX_UPLOAD_BYTES.
import net from 'node:net';
import { Agent, request } from 'undici';
import { guardedLookup, hostOf, isPrivateAddress, refusedAddress } from '../../common/net/address-policy.ts';
import type { SeedingConfig } from './config.ts';
import { SourceError } from './extract/index.ts';

const PAGE_TYPES: Record<string, string> = {
  'text/markdown': 'text/markdown',
  'text/x-markdown': 'text/markdown',
  'text/plain': 'text/plain',
  'text/html': 'text/html',
  'application/xhtml+xml': 'text/html',
  'application/jsonl': 'application/jsonl',
  'application/x-ndjson': 'application/jsonl',
};

/** Why the URL may not be fetched, or undefined. Resolves the name. */
export async function urlRefusal(config: SeedingConfig, url: string): Promise<string | undefined> {
  if (config.urlHosts.length === 0) return 'URL sources are off in this deployment (SEEDING_URL_HOSTS): upload the files instead';
  const host = hostOf(url).toLowerCase();
  if (!config.urlHosts.includes('*') && !config.urlHosts.includes(host)) {
    return `${host} is not a host URL sources may fetch from (SEEDING_URL_HOSTS)`;
  }
  return refusedAddress(url, config.allowPrivateUrls);
}

export interface FetchedPage {
  mediaType: string;
  filename: string;
  bytes: Uint8Array;
}

async function readCapped(body: AsyncIterable<Buffer> & { destroy(): void }, max: number): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > max) {
      body.destroy();
      throw new SourceError(`the page is larger than ${max} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

/** Fetches the page; SourceError with the reason when it cannot be seeded. */
export async function fetchPage(config: SeedingConfig, url: string, maxBytes: number): Promise<FetchedPage> {
  const refused = await urlRefusal(config, url);
  if (refused) throw new SourceError(refused);
  const host = hostOf(url);
  if (net.isIP(host) && !config.allowPrivateUrls && isPrivateAddress(host)) throw new SourceError(`${host} is a private address`);
  const timeout = config.fetchTimeoutMs;
  const agent = new Agent({
    connect: { lookup: guardedLookup(config.allowPrivateUrls), timeout },
    headersTimeout: timeout,
    bodyTimeout: timeout,
  });
  try {
    const res = await request(url, {
      method: 'GET',
      headers: { accept: 'text/markdown, text/plain, application/jsonl;q=0.9, text/html;q=0.8', 'user-agent': 'Mindgate-Seeding/1' },
      dispatcher: agent,
      signal: AbortSignal.timeout(timeout),
    });
    const body = res.body as unknown as AsyncIterable<Buffer> & { destroy(): void };
    // Leaving a page unread aborts it: that abort is ours, not an error to report.
    res.body.on('error', () => {});
    if (res.statusCode !== 200) {
      body.destroy();
      throw new SourceError(`the page answered HTTP ${res.statusCode}`);
    }
    const type = String(res.headers['content-type'] ?? '')
      .split(';')[0]
      .trim()
      .toLowerCase();
    const mediaType = PAGE_TYPES[type];
    if (!mediaType) {
      body.destroy();
      throw new SourceError(`the page is ${type || 'of no type'}: URL sources take HTML pages, Markdown, plain text or JSON Lines`);
    }
    const filename = new URL(url).pathname.split('/').filter(Boolean).pop() || new URL(url).hostname;
    return { mediaType, filename, bytes: await readCapped(body, maxBytes) };
  } catch (err) {
    if (err instanceof SourceError) throw err;
    throw new SourceError(`the page could not be fetched: ${(err as Error).message}`);
  } finally {
    void agent.close();
  }
}
