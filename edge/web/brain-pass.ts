// POST {web_url}/api/v1/agent/brain-pass (and /api/agent/brain-pass): selling Brain access to an
// autonomous agent with no account, through the Payment HTTP authentication scheme. Without a
// credential: 402, `Cache-Control: no-store`, a problem, and one `WWW-Authenticate: Payment`
// challenge per payment method (stateless: the billing service binds each with an HMAC). With
// `Authorization: Payment <credential>`: the billing service verifies and settles it at most once;
// then a new organization is opened for the pass and the answer is 200 with a `Payment-Receipt` and
// an access token for its Brain MCP server, usable at once. A body naming `organization_id` buys
// the pass for that existing organization instead, only with proof of access to it on both
// requests (brain-pass-access.ts; 403 otherwise, the same whether or not it exists); its
// challenges are bound to it, so a payment for one organization serves no other. Nothing is
// created before the payment settles; the credential is never logged (authorization, x-api-key
// and brain-pass-token headers are redacted, and the payload is not written anywhere). Rate
// limited per client IP under its own policy, `brain-pass`.
import type { ServerResponse } from 'node:http';
import { timestampMs } from '@bufbuild/protobuf/wkt';
import { ConnectError } from '@connectrpc/connect';
import * as z from 'zod';
import { Plan } from '../../gen/mindgate/billing/v1/billing_pb.js';
import type { PaymentChallenge } from '../../gen/mindgate/billing/v1/brain_pass_pb.js';
import { reasonOf } from '../../services/common/rpc/reasons.ts';
import { requestCountry } from '../api/billing-config.ts';
import type { AppContext } from '../context.ts';
import { defineApiRoute, type AnyApiRoute, type ResponseSpec } from '../http/api-route.ts';
import { BodyTooLargeError, readBody, sendJson, sendProblem } from '../http/respond.ts';
import type { WebRoute } from './api.ts';
import { provesAccessTo } from './brain-pass-access.ts';
import { createPassTokenMinter } from './brain-pass-token.ts';
import {
  encodeReceipt,
  formatChallenge,
  PAYMENT_PROBLEMS,
  parseCredential,
  PROBLEM_BASE,
  PROBLEM_BY_REASON,
  type PaymentProblem,
} from './brain-pass-scheme.ts';

export const BRAIN_PASS_PATH = '/api/v1/agent/brain-pass';

export const PassRequestSchema = z
  .object({
    name: z.string().trim().min(1).max(200).optional().meta({ description: 'Name of the new organization.' }),
    organization_id: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/)
      .optional()
      .meta({
        description:
          'An existing organization to buy the pass for, instead of a new one. Both requests (the one answered 402 and the paid retry) must prove access to it: `x-api-key` with an API key of the organization (`admin` scope, no team), or `Brain-Pass-Token` with its brain-pass access token, current or expired at most 7 days ago.',
      }),
  })
  .strict()
  .refine((b) => !(b.name && b.organization_id), { message: 'name is for a new organization: send name or organization_id, not both' })
  .meta({ title: 'BrainPassRequest' });

export const PassSchema = z
  .object({
    organization_id: z.string(),
    access_token: z.string().meta({ description: 'Bearer token for the Brain MCP server; no refresh.' }),
    token_type: z.literal('Bearer'),
    expires_at: z.string().meta({
      description:
        "When the pass ends: its hours from the later of the payment and the end of the organization's passes so far (renewing early adds to the time left).",
    }),
    expires_in: z.int().meta({ description: 'Seconds the pass lasts from now.' }),
    mcp_url: z.string().meta({ description: 'The Brain MCP endpoint (Streamable HTTP).' }),
    plan: z.enum(['starter', 'professional']),
  })
  .meta({ title: 'BrainPass' });

type Res = ServerResponse;

/** Where the request is from, and the existing organization it buys for ('' for a new one). */
interface PassFor {
  country?: string;
  organizationId: string;
}

async function sendPaymentProblem(ctx: AppContext, res: Res, path: string, problem: PaymentProblem, detail: string, to: PassFor) {
  const { status, title } = PAYMENT_PROBLEMS[problem];
  const { challenges } = await ctx.clients.brainPass.issueChallenges({ country: to.country ?? '', organizationId: to.organizationId });
  if (challenges.length === 0) {
    sendProblem(res, { title: 'Service Unavailable', status: 503, detail: 'brain-pass is not sold on this platform', instance: path });
    return;
  }
  res.setHeader('cache-control', 'no-store');
  if (status === 402) res.setHeader('www-authenticate', challenges.map(formatChallenge));
  sendProblem(res, { type: `${PROBLEM_BASE}${problem}`, title, status, detail, instance: path });
}

/** The request's body: absent or `{"name"?, "organization_id"?}`; undefined when it answered 400. */
async function readPassRequest(
  req: import('node:http').IncomingMessage,
  res: Res,
  path: string,
): Promise<{ name?: string; organization_id?: string } | undefined> {
  const invalid = (reason: string) => {
    sendProblem(res, {
      title: 'Bad Request',
      status: 400,
      detail: `body ${reason}`,
      instance: path,
      'invalid-params': [{ name: '(body)', in: 'body', reason }],
    });
    return undefined;
  };
  let raw: Buffer;
  try {
    raw = await readBody(req, 4_096);
  } catch (err) {
    if (err instanceof BodyTooLargeError) return invalid('must be at most 4096 bytes');
    throw err;
  }
  if (raw.length === 0) return {};
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/json') return invalid('must be application/json');
  let json: unknown;
  try {
    json = JSON.parse(raw.toString('utf8'));
  } catch {
    return invalid('is not JSON');
  }
  const parsed = PassRequestSchema.safeParse(json);
  return parsed.success ? parsed.data : invalid(parsed.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; '));
}

/**
 * The organization of a settled pass (the named one, or a new one), on the pass's plan until it
 * expires; undefined when that failed.
 */
async function provision(ctx: AppContext, settlementId: string, body: { name?: string; organization_id?: string }) {
  try {
    let organizationId = body.organization_id;
    if (!organizationId) {
      const { organization } = await ctx.clients.organizations.createOrganization({
        name: body.name ?? `Brain pass ${new Date(ctx.now()).toISOString().slice(0, 10)}`,
        ownerUserId: `brain-pass:${settlementId.slice(0, 40)}`,
        slug: '',
      });
      organizationId = organization!.organizationId;
    }
    const done = await ctx.clients.brainPass.completePass({ settlementId, organizationId });
    return { organizationId, expiresAt: timestampMs(done.expireTime!), plan: done.plan };
  } catch (err) {
    // Paid but not provisioned: the same credential finishes the job once the lease lapses.
    ctx.logger.error({ err, settlement: settlementId }, 'brain-pass paid but not provisioned');
    return undefined;
  }
}

async function settle(ctx: AppContext, res: Res, path: string, authorization: string | undefined, to: PassFor) {
  const credential = parseCredential(authorization);
  if (credential === undefined) {
    await sendPaymentProblem(
      ctx,
      res,
      path,
      'payment-required',
      'Pay for a brain-pass: answer one of the challenges in WWW-Authenticate.',
      to,
    );
    return undefined;
  }
  if (credential === null) {
    await sendPaymentProblem(
      ctx,
      res,
      path,
      'malformed-credential',
      'The Payment credential is not base64url JSON {challenge, payload}.',
      to,
    );
    return undefined;
  }
  try {
    return await ctx.clients.brainPass.settlePass({
      challenge: credential.challenge as PaymentChallenge,
      source: credential.source,
      payloadJson: JSON.stringify(credential.payload),
      organizationId: to.organizationId,
    });
  } catch (err) {
    const problem = err instanceof ConnectError ? PROBLEM_BY_REASON[reasonOf(err) ?? ''] : undefined;
    if (!problem) throw err;
    await sendPaymentProblem(ctx, res, path, problem, (err as ConnectError).rawMessage, to);
    return undefined;
  }
}

/** The one answer to a request naming an organization it does not prove access to, whether or not it exists. */
function refuseNamed(res: Res, path: string): void {
  sendProblem(
    res,
    {
      title: 'Forbidden',
      status: 403,
      detail:
        'A pass for an existing organization needs proof of access to it: an API key of the organization with the admin scope and no team (x-api-key), or its brain-pass access token, current or expired at most 7 days ago (Brain-Pass-Token). Nothing was charged.',
      instance: path,
    },
    { 'cache-control': 'no-store' },
  );
}

export function brainPassRoute(ctx: AppContext): WebRoute {
  const mint = createPassTokenMinter(ctx);
  const gone = (res: Res, path: string, detail: string) =>
    sendProblem(res, { title: 'Service Unavailable', status: 503, detail, instance: path }, { 'retry-after': '60' });

  return {
    ...(defineApiRoute({
      method: 'POST',
      path: BRAIN_PASS_PATH,
      operationId: 'buyBrainPass',
      summary: 'Buy a brain-pass (Machine Payments Protocol)',
      description:
        'For autonomous agents without an account. Without credentials: 402 with a `WWW-Authenticate: Payment` challenge per payment method (amount, currency and recipient in `request`, RFC 8785 canonical JSON, base64url). Pay, then retry with `Authorization: Payment <credential>`: 200 with a `Payment-Receipt` and a time-limited access token for the Brain MCP server of a new organization, or of the existing one named by `organization_id` (with proof of access to it on both requests: `x-api-key` or `Brain-Pass-Token`; 403, the same whether or not the organization exists, otherwise; its challenges are bound to it). Each challenge pays once. Payment errors are problems of the Payment scheme (`https://paymentauth.org/problems/...`).',
      tags: ['Agents'],
      responses: passResponses,
      async handler({ req, res, path }) {
        const body = await readPassRequest(req, res, path);
        if (!body) return;
        const named = body.organization_id ?? '';
        // Checked on the 402 request and again on the paid one, before anything is charged.
        if (named && !(await provesAccessTo(ctx, req.headers, named))) return refuseNamed(res, path);
        const to = { country: requestCountry(ctx.config.billingEdge, req.headers), organizationId: named };
        const settled = await settle(ctx, res, path, req.headers.authorization, to);
        if (!settled) return;
        const provisioned = await provision(ctx, settled.settlementId, body);
        if (!provisioned)
          return gone(res, path, 'The payment settled but the pass could not be set up; retry the same request in a minute.');
        const { organizationId, expiresAt, plan } = provisioned;
        const pass = await mint(organizationId, `brain-pass:${settled.settlementId.slice(0, 40)}`, expiresAt);
        const receipt = encodeReceipt({
          method: settled.method,
          timestamp: new Date(timestampMs(settled.settleTime!)).toISOString(),
          reference: settled.reference,
        });
        sendJson(
          res,
          200,
          {
            organization_id: organizationId,
            access_token: pass.token,
            token_type: 'Bearer',
            expires_at: new Date(expiresAt).toISOString(),
            expires_in: Math.max(0, Math.floor((expiresAt - ctx.now()) / 1000)),
            mcp_url: pass.audience,
            plan: plan === Plan.PROFESSIONAL ? 'professional' : 'starter',
          },
          { 'payment-receipt': receipt, 'cache-control': 'private' },
        );
      },
    }) as AnyApiRoute),
    policy: 'brain-pass',
    extensions: { 'x-ratelimit-policy': 'brain-pass' },
  };
}

const problemResponse = (description: string, headers?: ResponseSpec['headers']): ResponseSpec => ({
  description,
  content: { 'application/problem+json': { $ref: '#/components/schemas/Problem' } },
  ...(headers ? { headers } : {}),
});

const passResponses: Record<string, ResponseSpec | string> = {
  '200': {
    description: 'The pass: paid and set up.',
    content: { 'application/json': PassSchema },
    headers: {
      'Payment-Receipt': { description: 'base64url JSON {status, method, timestamp, reference}.', schema: { type: 'string' } },
      'Cache-Control': { description: '`private`.', schema: { type: 'string' } },
    },
  },
  '400': problemResponse('`method-unsupported`, or a body that is not `{"name"?, "organization_id"?}` (`invalid-params`).'),
  '403': problemResponse(
    '`organization_id` named without proof of access to it (the same answer whether or not it exists); nothing is charged.',
  ),
  '402': problemResponse(
    'Payment required (`payment-required`), or the credential was refused: `malformed-credential`, `invalid-challenge` (altered, or already used), `verification-failed`, `payment-expired`. Carries fresh challenges.',
    {
      'WWW-Authenticate': { description: 'One `Payment` challenge per payment method.', schema: { type: 'string' } },
      'Cache-Control': { description: '`no-store`.', schema: { type: 'string' } },
    },
  ),
  '503': problemResponse('Paid but not set up yet: retry the same request in a minute.'),
};

/** The request body and the Payment security scheme, which route declarations do not carry. */
export function documentBrainPass(doc: Record<string, unknown>): void {
  const paths = doc.paths as Record<string, Record<string, Record<string, unknown>>>;
  const op = paths[BRAIN_PASS_PATH]?.post;
  if (!op) return;
  const schema = z.toJSONSchema(PassRequestSchema, { io: 'input', target: 'draft-2020-12' }) as Record<string, unknown>;
  delete schema.$schema;
  op.requestBody = { required: false, content: { 'application/json': { schema } } };
  op.parameters = [
    {
      name: 'x-api-key',
      in: 'header',
      required: false,
      description: 'With `organization_id`: an API key of that organization (admin scope, no team) as proof of access.',
      schema: { type: 'string' },
    },
    {
      name: 'Brain-Pass-Token',
      in: 'header',
      required: false,
      description:
        "With `organization_id`: that organization's brain-pass access token (current, or expired at most 7 days ago) as proof of access.",
      schema: { type: 'string' },
    },
  ];
  op.security = [{}, { Payment: [] }];
  const components = (doc.components ??= {}) as Record<string, Record<string, unknown>>;
  components.securitySchemes = {
    ...components.securitySchemes,
    Payment: { type: 'http', scheme: 'Payment', description: 'The Payment HTTP authentication scheme (draft-httpauth-payment).' },
  };
}
