import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Hono } from 'hono';
import { serve } from '@hono/node-server';
import { routes, type RouteSpec } from '@smarthome/protocol';
import { SpecRouter, installErrorHandling, unauthorized } from '@smarthome/protocol/server';
import type { CloudConfig } from './config.ts';
import { CloudDatabase } from './db/database.ts';
import { createLogger, type Logger } from './log.ts';
import { AccessTokenSigner } from './auth/jwt.ts';
import { AuthService } from './auth/service.ts';
import { LoginThrottle, MemoryFailureStore } from './auth/throttle.ts';
import { safeEqual } from './auth/secrets.ts';
import type { Caller, CloudServices } from './context.ts';
import { mountDocs } from './docs/routes.ts';
import { EdgeRegistry } from './edges/registry.ts';
import { MirrorStore } from './mirror/store.ts';
import { migrations, routeModules } from './modules.ts';

const ANONYMOUS: Caller = { userId: '', via: 'anonymous' };

function bearerOf(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : null;
}

/** The cloud relay: constructor assigns, start() does I/O, stop() unwinds it all. */
export class Cloud {
  readonly config: CloudConfig;
  readonly log: Logger;
  readonly app = new Hono();
  readonly database: CloudDatabase;
  readonly services: CloudServices;
  private readonly signer: AccessTokenSigner;
  private readonly router: SpecRouter<Caller>;
  private server: Server | null = null;

  constructor(config: CloudConfig, opts: { log?: Logger } = {}) {
    this.config = config;
    this.log = opts.log ?? createLogger('cloud');
    this.database = new CloudDatabase(path.join(config.dataDir, 'cloud.db'), migrations);
    this.signer = new AccessTokenSigner(config.dataDir, config.accessTokenTtlSeconds);
    const throttle = new LoginThrottle(new MemoryFailureStore());
    const auth = new AuthService({
      database: this.database,
      signer: this.signer,
      throttle,
      refreshTtlSeconds: config.refreshTokenTtlSeconds,
      fastHashing: config.fastHashing ?? false,
    });
    this.services = {
      config, database: this.database, log: this.log, auth, throttle,
      edges: new EdgeRegistry(this.database), mirror: new MirrorStore(this.database),
    };
    this.router = new SpecRouter<Caller>(this.app, {
      authenticate: (c, spec) => this.authenticate(c.req.header('authorization'), spec),
      bodyLimit: config.bodyLimitBytes,
    });
    installErrorHandling(this.app, this.log);
    this.router.add(routes.healthRoute, () => ({ status: 'ok' as const }));
    mountDocs(this.app, () => this.router.routes);
    for (const mount of routeModules) mount(this.router, this.services);
  }

  private async authenticate(header: string | undefined, spec: RouteSpec): Promise<Caller> {
    if (spec.auth === 'none') return ANONYMOUS;
    const token = bearerOf(header);
    if (!token) throw unauthorized();
    if (spec.auth === 'fleet') {
      if (!this.config.fleetToken || !safeEqual(token, this.config.fleetToken)) throw unauthorized();
      return { userId: '', via: 'fleet' };
    }
    if (spec.auth === 'edge') {
      const edge = await this.services.edges.authenticateEdgeToken(token);
      if (!edge) throw unauthorized();
      return { userId: '', via: 'edge', edgeId: edge.id };
    }
    const principal = await this.services.auth.authenticate(token);
    if (!principal) throw unauthorized();
    return principal;
  }

  get routes(): RouteSpec[] {
    return this.router.routes;
  }

  get port(): number {
    const address = this.server?.address() as AddressInfo | null;
    if (!address) throw new Error('cloud not started');
    return address.port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.database.start();
    await this.signer.start();
    this.server = await new Promise<Server>((resolve, reject) => {
      const server = serve({ fetch: this.app.fetch, port: this.config.port, hostname: this.config.host }) as Server;
      server.once('listening', () => resolve(server));
      server.once('error', reject);
    });
    // Bound how long a client may take to send its request (slowloris).
    this.server.requestTimeout = 30_000;
    this.server.headersTimeout = 10_000;
  }

  /** Stops accepting, lets in-flight requests finish, then closes the database. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
    }
    this.database.stop();
  }
}

export function createCloud(config: CloudConfig, opts: { log?: Logger } = {}): Cloud {
  return new Cloud(config, opts);
}
