// The MCP SDK's OAuth client provider, as an interactive MCP client implements it, with the
// "user agent" step done by the test browser (consent approved, IdP signs in by itself).
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { createBrowser, signIn, type Browser } from './gateway-browser.ts';

export class TestOAuthProvider implements OAuthClientProvider {
  readonly browser: Browser = createBrowser();
  readonly redirect: string;
  /** The code that reached the redirect URI, for transport.finishAuth(). */
  code: string | undefined;
  /** The `iss` that came with it (RFC 9207). */
  iss: string | undefined;
  /** Every URL the client was sent to for authorization. */
  authorizationUrls: URL[] = [];
  private info: OAuthClientInformationMixed | undefined;
  private saved: OAuthTokens | undefined;
  private verifier = '';
  registrations = 0;
  tokenSaves = 0;

  constructor(redirect = 'http://127.0.0.1:45999/callback') {
    this.redirect = redirect;
  }

  get redirectUrl(): string {
    return this.redirect;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Vitest MCP client',
      redirect_uris: [this.redirect],
      // Some clients register only authorization_code and refresh anyway.
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  state(): string {
    return 'client-state-123';
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.info;
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.registrations++;
    this.info = info;
  }

  tokens(): OAuthTokens | undefined {
    return this.saved;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.tokenSaves++;
    this.saved = tokens;
  }

  /** Replaces the access token (to make the backend refuse it and the client refresh). */
  spoilAccessToken(): void {
    if (this.saved) this.saved = { ...this.saved, access_token: 'not-a-valid-token' };
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    this.authorizationUrls.push(url);
    const back = await signIn(this.browser, url.href, this.redirect);
    this.code = back.searchParams.get('code') ?? undefined;
    this.iss = back.searchParams.get('iss') ?? undefined;
    if (back.searchParams.get('state') !== 'client-state-123') throw new Error('the client state did not come back');
    if (!this.code) throw new Error(`no code came back: ${back.href}`);
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    return this.verifier;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all' || scope === 'client') this.info = undefined;
    if (scope === 'all' || scope === 'tokens') this.saved = undefined;
  }
}
