import { DEFAULT_PORTS, type SurfaceName } from './config.ts';
import type { AppContext } from './context.ts';
import { createApiSurface } from './api/index.ts';
import { createGatewaySurface } from './gateway/index.ts';
import { startListener, type Listener, type Surface } from './http/listener.ts';
import { createProbeHandler } from './http/probes.ts';
import { createBrainMcpHandler } from './mcp/brain-server.ts';
import { registerGatewayClients } from './oauth/gateway-client.ts';
import { createAuthSurface } from './oauth/index.ts';
import { createEdgeReadiness } from './readiness.ts';
import { createWebSurface } from './web/index.ts';

export interface Edge {
  listeners: Record<SurfaceName, Listener>;
  close(graceMs?: number): Promise<void>;
}

const SURFACES: Record<SurfaceName, (ctx: AppContext) => Surface | Promise<Surface>> = {
  gateway: async (ctx) => {
    // The Brain's MCP endpoint is served in-process unless a servers file gives `brain` a backend URL.
    const surface = createGatewaySurface(ctx, {
      localHandlers: ctx.config.gateway.servers.some((s) => s.name === 'brain' && !s.url) ? { brain: createBrainMcpHandler(ctx) } : {},
    });
    // The facade's client at this platform's own authorization server (the Brain's facade).
    try {
      await registerGatewayClients(
        ctx.stores.records,
        ctx.keyEncryption,
        surface.platformClients,
        ctx.logger.child({ component: 'oauth' }),
      );
      // Servers managed through the Agents API are served from the first request on.
      await surface.registrySync.ready;
    } catch (err) {
      await surface.close?.();
      throw err;
    }
    return surface;
  },
  api: createApiSurface,
  web: createWebSurface,
  auth: createAuthSurface,
};

export async function startEdge(ctx: AppContext): Promise<Edge> {
  const listeners = {} as Record<SurfaceName, Listener>;
  const readiness = createEdgeReadiness(ctx);
  try {
    for (const [name, create] of Object.entries(SURFACES) as [SurfaceName, (typeof SURFACES)[SurfaceName]][]) {
      listeners[name] = await startListener(await create(ctx), {
        host: ctx.config.host,
        port: ctx.config.ports[name],
        settings: { host: 'HOST', port: DEFAULT_PORTS[name].variable },
        logger: ctx.logger,
        accessLogLevel: ctx.config.accessLog ? 'info' : 'debug',
        bodyTimeoutMs: ctx.config.bodyTimeoutMs,
        requestTimeoutMs: ctx.config.requestTimeoutMs,
        probes: createProbeHandler(name, readiness[name]),
        metrics: ctx.metrics.http,
      });
    }
  } catch (err) {
    await Promise.allSettled(Object.values(listeners).map((l) => l.close(0)));
    throw err;
  }
  return {
    listeners,
    async close(graceMs) {
      await Promise.all(Object.values(listeners).map((l) => l.close(graceMs)));
    },
  };
}
