// Labeled queries over the blog in content/blog: each names the post that answers it best.
// Written as an agent or a person would ask, mostly in words the post does not use, so that
// they measure meaning as well as words. Used by test/bench/web-search-eval.bench.ts to choose
// the fusion weights and by test/integration/web-search.test.ts to hold the ranking to them.

export interface LabeledQuery {
  query: string;
  /** The slug of the post that answers the query best. */
  expected: string;
}

export const LABELED_QUERIES: LabeledQuery[] = [
  // The gateway
  { query: 'put several hosted MCP servers behind one address', expected: 'mcp-gateway' },
  { query: 'how do I call a tool server through the proxy', expected: 'mcp-gateway' },
  { query: 'gateway key for internal infrastructure', expected: 'mcp-gateway' },
  { query: 'which well-known URL does an MCP client fetch for protected resource metadata', expected: 'mcp-gateway' },
  { query: 'route requests to the right backend by server name', expected: 'mcp-gateway' },
  // The OAuth facade
  { query: 'why does dynamic client registration return the same client id', expected: 'stateless-oauth-facade' },
  { query: 'HMAC signed state carrying PKCE challenge', expected: 'stateless-oauth-facade' },
  { query: 'sign-in relay without a database of clients', expected: 'stateless-oauth-facade' },
  { query: 'exchange the upstream authorization code on the server', expected: 'stateless-oauth-facade' },
  { query: 'refresh token request proxied to identity provider', expected: 'stateless-oauth-facade' },
  // The Brain
  { query: 'shared memory for AI agents across the company', expected: 'the-brain' },
  { query: 'agents forget what they learned yesterday', expected: 'the-brain' },
  { query: 'difference between episodes and knowledge', expected: 'the-brain' },
  { query: 'report that a remembered fact turned out wrong', expected: 'the-brain' },
  { query: 'contradictions between stored memories', expected: 'the-brain' },
  { query: 'which tool should an agent call at the start of a task', expected: 'the-brain' },
  // The REST API
  { query: 'automate what the dashboard does from a script', expected: 'rest-api' },
  { query: 'server to server authentication with client credentials', expected: 'rest-api' },
  { query: 'x-api-key header for an organization', expected: 'rest-api' },
  { query: 'what happens to my integration when an endpoint is removed', expected: 'rest-api' },
  { query: 'bearer token audience for the agents api', expected: 'rest-api' },
  // Operating it
  { query: 'install on a single server without a database', expected: 'operating-mindgate' },
  { query: 'move records to MongoDB and vectors to Qdrant in production', expected: 'operating-mindgate' },
  { query: 'kubernetes helm chart deployment', expected: 'operating-mindgate' },
  { query: 'graceful shutdown on SIGTERM', expected: 'operating-mindgate' },
  { query: 'environment variable validation error at startup', expected: 'operating-mindgate' },
  { query: 'run each internal service as its own process', expected: 'operating-mindgate' },
  // The Web API and site
  { query: 'get a page as markdown instead of html', expected: 'web-api-for-agents' },
  { query: 'what does a 429 response mean and when can I retry', expected: 'web-api-for-agents' },
  { query: 'llms.txt file for language models', expected: 'web-api-for-agents' },
  { query: 'quality values in the Accept header', expected: 'web-api-for-agents' },
  { query: 'requests per minute allowed for anonymous clients', expected: 'web-api-for-agents' },
  // Blog search
  { query: 'how are search results ranked on this blog', expected: 'blog-search-bm25-first' },
  { query: 'combine keyword scoring with sentence vectors', expected: 'blog-search-bm25-first' },
  { query: 'why did my query return nothing', expected: 'blog-search-bm25-first' },
  // Changelog
  { query: 'what changed recently', expected: 'changelog' },
  { query: 'release notes and sunset dates', expected: 'changelog' },
  { query: 'when will the old status endpoint be removed', expected: 'changelog' },
];

/** Queries about things the blog does not cover: a good ranking returns few or no posts. */
export const OFF_TOPIC_QUERIES = [
  'chocolate cake recipe with strawberries',
  'football world cup final score',
  'knitting patterns for winter scarves',
];
