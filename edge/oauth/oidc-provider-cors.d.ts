// oidc-provider's own CORS middleware, the one its discovery, token, revocation and
// introspection endpoints use; reused for registration so that all of them follow one policy.
declare module 'oidc-provider/lib/shared/cors.js' {
  import type { Middleware } from 'koa';
  export default function cors(options: {
    allowMethods: string;
    maxAge?: number;
    clientBased?: boolean;
    exposeHeaders?: string;
  }): Middleware;
}
