// The gateway's request and response schemas: they validate requests (edge/http/validation.ts)
// and are the schemas of the OpenAPI document (openapi.ts), so the two cannot drift apart.
import { z } from 'zod';

const nullableString = z.string().nullable().optional();

export const DCRRequestSchema = z
  .object({
    redirect_uris: z.array(z.string()).min(1),
    client_name: nullableString,
    grant_types: z.array(z.string()).nullable().optional(),
    response_types: z.array(z.string()).nullable().optional(),
    token_endpoint_auth_method: nullableString,
    application_type: nullableString,
    software_id: nullableString,
    software_version: nullableString,
    scope: nullableString,
  })
  .meta({ title: 'DCRRequest', description: 'Dynamic client registration request (RFC 7591 subset).' });

export type DCRRequest = z.output<typeof DCRRequestSchema>;

export const DCRResponseSchema = z
  .object({
    client_id: z.string(),
    client_id_issued_at: z.int(),
    redirect_uris: z.array(z.string()),
    grant_types: z.array(z.string()),
    response_types: z.array(z.string()),
    token_endpoint_auth_method: z.string(),
    application_type: z.string(),
    client_name: z.string().nullable().optional(),
    software_id: z.string().nullable().optional(),
  })
  .meta({
    title: 'DCRResponse',
    description: "Public-client subset of RFC 7591 client information: the server's pre-registered upstream client_id, never a secret.",
  });

export type DCRResponse = z.output<typeof DCRResponseSchema>;

/** Query of GET /{server_name}/oauth/authorize. */
export const AuthorizeQuerySchema = z.object({
  response_type: z.string().meta({ description: 'Must be `code`.' }),
  client_id: z.string().meta({ description: 'The client_id returned by registration.' }),
  redirect_uri: z.string().meta({
    description: 'https, loopback http on any port, or a private-use scheme in reverse domain-name form (`com.example.app:`) or `cursor:`.',
  }),
  code_challenge: z.string().meta({ description: 'PKCE challenge (RFC 7636), required.' }),
  code_challenge_method: z.string().optional().meta({ description: 'Must be `S256`.' }),
  state: z.string().optional(),
  scope: z.string().optional(),
  resource: z.string().optional().meta({ description: 'RFC 8707 resource; not forwarded upstream.' }),
  prompt: z.string().optional(),
});
export type AuthorizeQuery = z.output<typeof AuthorizeQuerySchema>;

/** Form of POST /{server_name}/oauth/authorize (the consent page's answer). */
export const ConsentFormSchema = z.object({
  ticket: z.string().meta({ description: 'The signed consent ticket of the page.' }),
  decision: z.enum(['approve', 'deny']),
});
export type ConsentForm = z.output<typeof ConsentFormSchema>;

/** Query of GET /{server_name}/oauth/callback (from the upstream identity provider). */
export const CallbackQuerySchema = z.object({
  state: z.string(),
  code: z.string().optional(),
  error: z.string().optional(),
  error_description: z.string().optional(),
  iss: z.string().optional(),
});

/** Form of POST /{server_name}/oauth/token. */
export const TokenFormSchema = z.object({
  grant_type: z.string().meta({ description: '`authorization_code` or `refresh_token`.' }),
  code: z.string().optional(),
  redirect_uri: z.string().optional(),
  code_verifier: z.string().optional(),
  client_id: z.string().optional(),
  refresh_token: z.string().optional(),
  scope: z.string().optional(),
  resource: z.string().optional(),
});

export const TokenResponseSchema = z
  .object({
    access_token: z.string(),
    token_type: z.string(),
    expires_in: z.int().optional(),
    refresh_token: z.string().optional(),
    scope: z.string().optional(),
    id_token: z.string().optional(),
  })
  .loose()
  .meta({ title: 'TokenResponse', description: "The upstream's token response, passed through (refresh tokens are wrapped)." });

export const OAuthErrorSchema = z
  .object({ error: z.string(), error_description: z.string().optional() })
  .meta({ title: 'OAuthError', description: 'RFC 6749 §5.2 error.' });

export const GatewayErrorSchema = z
  .object({ error: z.string(), detail: z.string() })
  .meta({ title: 'GatewayError', description: 'A gateway failure: unknown server, backend down or slow, bad gateway key.' });
