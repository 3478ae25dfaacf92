import { z } from 'zod';
import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { ErrorCode, ErrorMessage, errorDescriptions, errorShapeByStatus } from './errors.ts';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';
/** bearer: user access token or PAT; none: public; fleet: FLEET_TOKEN; edge: edge token. */
export type AuthKind = 'bearer' | 'none' | 'fleet' | 'edge';
/** Error body shape: `{message}` (ErrorMessage) or `{error}` (ErrorCode). */
export type ErrorShape = 'message' | 'error';
/**
 * Who reads the request body declared in `body`: 'router' (default) reads and validates it
 * before the handler runs; 'manual' documents it only, and the handler reads it itself
 * (readJsonObject / readBodyBytes), e.g. after cheaper checks or with its own error bodies.
 */
export type BodyReading = 'router' | 'manual';

export interface RouteSpec<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
  R extends z.ZodType = z.ZodType,
  M extends BodyReading = BodyReading,
> {
  method: HttpMethod;
  /** OpenAPI-style path: /v1/zones/{id} */
  path: string;
  summary: string;
  tag: string;
  auth: AuthKind;
  /** accepts X-Organization-Id */
  orgContext?: boolean;
  params?: P;
  query?: Q;
  body?: B;
  /** 'manual': `body` is documented in OpenAPI but the router neither reads nor parses it (see BodyReading). */
  readBody?: M;
  /** extra request headers (besides Authorization / X-Organization-Id) */
  headers?: z.ZodObject;
  status: number;
  response?: R;
  /** response without a JSON body (e.g. 200 empty, 101 upgrade) */
  emptyResponse?: boolean;
  /**
   * The success carries a (weak) ETag and the route honours If-None-Match with 304, and gzip
   * with Accept-Encoding: documented as such in OpenAPI; the handler does the work.
   */
  conditional?: boolean;
  errors: number[];
  /**
   * Per-route override of the error body shape for a status (default: errorShapeByStatus),
   * e.g. the store receiver's 400 `{error}`. Used by the OpenAPI document and by SpecRouter,
   * which answers an HttpError of that status (thrown without its own `shape`) in this shape.
   */
  errorShapes?: Partial<Record<number, ErrorShape>>;
}

export function defineRoute<
  P extends z.ZodType,
  Q extends z.ZodType,
  B extends z.ZodType,
  R extends z.ZodType,
  M extends BodyReading = 'router',
>(spec: RouteSpec<P, Q, B, R, M>): RouteSpec<P, Q, B, R, M> {
  return spec;
}

/** The body shape a route's error of `status` has: the route's override, else the per-status default. */
export function errorShapeOf(spec: Pick<RouteSpec, 'errorShapes'>, status: number): ErrorShape {
  return spec.errorShapes?.[status] ?? errorShapeByStatus[status] ?? 'error';
}

export const ORG_HEADER = 'X-Organization-Id';

const CONDITIONAL_REQUEST_HEADERS = z.object({
  'if-none-match': z
    .string()
    .optional()
    .meta({ description: 'an ETag from an earlier answer: 304 while it is still current' }),
  'accept-encoding': z
    .string()
    .optional()
    .meta({ description: 'gzip: the body comes gzip-compressed (Content-Encoding: gzip)' }),
});
const CONDITIONAL_RESPONSE_HEADERS = z.object({
  etag: z.string().meta({ description: 'weak entity tag of this content' }),
  vary: z.string().meta({ description: 'Accept-Encoding' }),
});

/** OpenAPI 3.1 document for the routes a server actually mounts. */
/**
 * `everyRoute`: responses any route of this server may give besides its own `errors` (status →
 * description), e.g. the cloud's 503 while its database is unreachable.
 */
export function buildOpenApiDocument(
  routes: RouteSpec[],
  info: { title: string; description?: string; serverUrl?: string; everyRoute?: Record<number, string> },
) {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'access token (JWT) or personal access token',
  });
  registry.registerComponent('securitySchemes', 'fleet', {
    type: 'http',
    scheme: 'bearer',
    description: 'FLEET_TOKEN of the cloud',
  });
  registry.registerComponent('securitySchemes', 'edge', {
    type: 'http',
    scheme: 'bearer',
    description: 'edge pairing token',
  });
  for (const r of routes) {
    const responses: Record<
      string,
      { description: string; content?: Record<string, { schema: z.ZodType }>; headers?: z.ZodObject }
    > = {};
    responses[String(r.status)] =
      r.response && !r.emptyResponse
        ? { description: 'success', content: { 'application/json': { schema: r.response } } }
        : { description: 'success' };
    if (r.conditional) {
      responses[String(r.status)]!.headers = CONDITIONAL_RESPONSE_HEADERS;
      responses['304'] = {
        description: 'not modified: the If-None-Match tag is still current (no body)',
        headers: CONDITIONAL_RESPONSE_HEADERS,
      };
    }
    const common = Object.entries(info.everyRoute ?? {}).map(
      ([status, description]) => [Number(status), description] as const,
    );
    // Every body is read within a byte limit (413); one the router reads must be declared JSON
    // (readJsonObject: 415), while manual readers decide for themselves.
    if (r.body) common.push([413, errorDescriptions[413]!]);
    if (r.body && r.readBody !== 'manual') common.push([415, errorDescriptions[415]!]);
    for (const [status, description] of [
      ...r.errors.map((s) => [s, errorDescriptions[s] ?? 'error'] as const),
      ...common.filter(([s]) => !r.errors.includes(s)),
    ]) {
      const shape = errorShapeOf(r, status);
      responses[String(status)] = {
        description,
        content: { 'application/json': { schema: shape === 'message' ? ErrorMessage : ErrorCode } },
      };
    }
    let headers = r.headers;
    if (r.conditional)
      headers = headers ? headers.extend(CONDITIONAL_REQUEST_HEADERS.shape) : CONDITIONAL_REQUEST_HEADERS;
    if (r.orgContext) {
      const org = z.object({
        [ORG_HEADER.toLowerCase()]: z.string().optional().meta({
          description:
            'organization context; the caller must be a member (else 403), with multi-factor sign-in enabled when the organization requires it (else 403 mfa_enrollment_required)',
        }),
      });
      headers = headers ? headers.extend(org.shape) : org;
    }
    registry.registerPath({
      method: r.method,
      path: r.path,
      summary: r.summary,
      tags: [r.tag],
      security: r.auth === 'none' ? [] : [{ [r.auth]: [] }],
      request: {
        params: r.params as z.ZodObject | undefined,
        query: r.query as z.ZodObject | undefined,
        headers,
        body: r.body ? { content: { 'application/json': { schema: r.body } }, required: true } : undefined,
      },
      responses,
    });
  }
  const generator = new OpenApiGeneratorV31(registry.definitions);
  return generator.generateDocument({
    openapi: '3.1.0',
    info: { title: info.title, version: '1.0.0', description: info.description },
    servers: info.serverUrl ? [{ url: info.serverUrl }] : undefined,
  });
}
