import type { Context, Hono } from 'hono';
import type { z } from 'zod';
import { errorShapeOf, type BodyReading, type RouteSpec } from '../route.ts';
import { HttpError, badRequest, notFound } from './errors.ts';
import { DEFAULT_BODY_LIMIT, readJsonObject } from './body.ts';

export interface Handled<P, Q, B, A> {
  c: Context;
  params: P;
  query: Q;
  body: B;
  auth: A;
}

type Out<S> = S extends z.ZodType ? z.input<S> : never;
type In<S> = S extends z.ZodType ? z.output<S> : undefined;
/** With `readBody: 'manual'` the handler gets no parsed body: it reads the request itself. */
type BodyIn<B, M> = [M] extends ['manual'] ? undefined : In<B>;

export interface RouterOptions<A> {
  /** Resolves the caller for a route's auth kind, or throws a 401 HttpError. */
  authenticate: (c: Context, spec: RouteSpec) => Promise<A>;
  bodyLimit?: number;
  /** Parse every response through its schema (strips unknown fields, catches drift). */
  validateResponses?: boolean;
}

/** `a.b[0]: message` for the first issue, so a 400 points at the bad field. */
export function describeZodError(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'validation error';
  const path = issue.path
    .map((p) => (typeof p === 'number' ? `[${p}]` : String(p)))
    .join('.')
    .replace(/\.\[/g, '[');
  return path ? `${path}: ${issue.message}` : issue.message;
}

export function parseOr400<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw badRequest(`${where} ${describeZodError(result.error)}`.trim(), result.error);
  return result.data;
}

const toHonoPath = (path: string) => path.replace(/\{([^}]+)\}/g, ':$1');

/**
 * Mounts handlers by their protocol RouteSpec: authenticates, validates params, query and
 * body with the spec's schemas (unless the spec says `readBody: 'manual'`: then the body is
 * only documented and the handler reads it), and serializes the result with the spec's status.
 * An HttpError thrown on the route without its own `shape` gets the spec's `errorShapes`.
 * `routes` is what the OpenAPI document is built from, so it lists only what is mounted.
 */
export class SpecRouter<A> {
  readonly routes: RouteSpec[] = [];
  private readonly app: Hono<any>;
  private readonly options: RouterOptions<A>;
  constructor(app: Hono<any>, options: RouterOptions<A>) {
    this.app = app;
    this.options = options;
  }

  add<
    P extends z.ZodType,
    Q extends z.ZodType,
    B extends z.ZodType,
    R extends z.ZodType,
    M extends BodyReading = BodyReading,
  >(
    spec: RouteSpec<P, Q, B, R, M>,
    handler: (
      h: Handled<In<P>, In<Q>, BodyIn<B, M>, A>,
    ) => Promise<Out<R> | Response | void> | Out<R> | Response | void,
  ): void {
    this.routes.push(spec as unknown as RouteSpec);
    const readsBody = spec.body !== undefined && spec.readBody !== 'manual';
    const errorShapes = spec.errorShapes;
    this.app.on(spec.method.toUpperCase(), toHonoPath(spec.path), async (c) => {
      if (!errorShapes) return this.handle(c, spec, readsBody, handler);
      try {
        return await this.handle(c, spec, readsBody, handler);
      } catch (err) {
        if (!(err instanceof HttpError) || err.shape || !errorShapes[err.status]) throw err;
        throw new HttpError(err.status, err.expose, {
          cause: err.cause,
          headers: err.headers,
          shape: errorShapeOf(spec, err.status),
        });
      }
    });
  }

  private async handle<
    P extends z.ZodType,
    Q extends z.ZodType,
    B extends z.ZodType,
    R extends z.ZodType,
    M extends BodyReading,
  >(
    c: Context,
    spec: RouteSpec<P, Q, B, R, M>,
    readsBody: boolean,
    handler: (
      h: Handled<In<P>, In<Q>, BodyIn<B, M>, A>,
    ) => Promise<Out<R> | Response | void> | Out<R> | Response | void,
  ): Promise<Response> {
    const { authenticate, bodyLimit = DEFAULT_BODY_LIMIT, validateResponses = true } = this.options;
    const auth = await authenticate(c, spec as unknown as RouteSpec);
    let params: unknown = undefined;
    if (spec.params) {
      const raw = c.req.param() as Record<string, string>;
      const result = spec.params.safeParse(raw);
      // A malformed id names nothing that exists; nor does one holding NUL (which PostgreSQL cannot even compare).
      if (!result.success || Object.values(raw).some((v) => v.includes('\0'))) throw notFound();
      params = result.data;
    }
    const rawQuery = c.req.query();
    if (Object.values(rawQuery).some((v) => v.includes('\0')))
      throw badRequest('query parameters may not contain NUL (U+0000)');
    const query = spec.query ? parseOr400(spec.query, rawQuery, 'query') : undefined;
    const body = readsBody && spec.body ? parseOr400(spec.body, await readJsonObject(c, bodyLimit), '') : undefined;
    const out = await handler({ c, params, query, body, auth } as Handled<In<P>, In<Q>, BodyIn<B, M>, A>);
    if (out instanceof Response) return out;
    if (spec.emptyResponse || out === undefined) return c.body(null, spec.status as 200);
    let payload: unknown = out;
    if (spec.response && validateResponses) {
      const result = spec.response.safeParse(out);
      if (!result.success) throw new HttpError(500, 'internal_error', { cause: result.error });
      payload = result.data;
    }
    return c.json(payload as object, spec.status as 200);
  }
}
