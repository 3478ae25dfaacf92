/**
 * What the fuzz test sends and how it judges the answers: every write route of an OpenAPI
 * document, bodies generated from its schemas (arbitrary.ts) and a fixed hostile set, path
 * parameters from real resources or hostile strings. The verdict: never a 5xx, and every error
 * a JSON body of the spec's shape (`{message}` or `{error}`, as documented for that status).
 */
import fc from 'fast-check';
import { errorShapeByStatus } from '@smarthome/protocol';
import { arbitraryFor, hostileValue, mutated, type JsonSchema } from './arbitrary.ts';

export interface Operation {
  method: string;
  /** OpenAPI path with {params} */
  path: string;
  op: any;
  /** the route reads a JSON body (documented requestBody) */
  body: JsonSchema | undefined;
  /** bearer, edge, fleet, or none */
  auth: string;
  orgContext: boolean;
}

export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  /** what was sent, for the report */
  label: string;
}

export interface Answer {
  status: number;
  text: string;
  contentType: string;
}

const WRITE_METHODS = ['post', 'put', 'patch', 'delete'];

export function writeOperations(doc: any): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
    for (const [method, op] of Object.entries(item)) {
      if (!WRITE_METHODS.includes(method)) continue;
      out.push({
        method: method.toUpperCase(),
        path,
        op,
        body: op.requestBody?.content?.['application/json']?.schema,
        auth: op.security?.length ? Object.keys(op.security[0])[0] : 'none',
        orgContext: (op.parameters ?? []).some((p: any) => p.in === 'header' && p.name === 'x-organization-id'),
      });
    }
  }
  return out;
}

export const pathParams = (path: string) => [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);

/** Path parameter values that name nothing, or try to escape: each must answer 4xx, never 5xx. */
export const HOSTILE_PARAMS = [
  '0',
  '-1',
  '99999999999999999999',
  '1e3',
  'null',
  '%00',
  '%2e%2e%2f%2e%2e',
  '..',
  'a'.repeat(2000),
  '%F0%9F%92%A9',
  '%FF%FE',
  "'%20OR%201=1",
  '{{x}}',
];

export const deepJson = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);

const DEEP_MARK = '\u0001deep\u0001';

/**
 * The sample with one of its values (each object or array, up to `max` of them) replaced by
 * 5,000 levels of nesting: where a valid body carries free-form JSON (dashboard cards, service
 * data, automation conditions), that is what reaches the code behind the validation.
 */
function deepAtEachPlace(sample: unknown, max = 12): HostileBody[] {
  const places: string[][] = [];
  const walk = (value: unknown, path: string[]) => {
    if (places.length >= max || !value || typeof value !== 'object') return;
    for (const [k, v] of Object.entries(value)) {
      if (places.length >= max) return;
      places.push([...path, k]);
      walk(v, [...path, k]);
    }
  };
  walk(sample, []);
  return places.map((path) => {
    const copy = structuredClone(sample) as Record<string, unknown>;
    let node: any = copy;
    for (const k of path.slice(0, -1)) node = node[k];
    node[path[path.length - 1]] = DEEP_MARK;
    return {
      label: `nested 5,000 levels at ${path.join('.')}`,
      body: JSON.stringify(copy).replace(JSON.stringify(DEEP_MARK), deepJson(5000)),
      contentType: 'application/json',
      status: 400,
    };
  });
}

export interface HostileBody {
  label: string;
  body: string | Uint8Array;
  contentType: string | null;
  /** the status a route whose body the router reads must answer (it reads the body before its handler runs) */
  status?: number;
}

/** The hostile bodies for one route, built around one schema-valid sample. */
export function hostileBodies(sample: unknown): HostileBody[] {
  const json = 'application/json';
  const valid = JSON.stringify(sample ?? {});
  const nulled = JSON.stringify(sample ?? {}, (_k, v) => (typeof v === 'string' ? `${v}\u0000\u0000` : v));
  const firstKey =
    sample && typeof sample === 'object' && !Array.isArray(sample) ? (Object.keys(sample)[0] ?? 'name') : 'name';
  return [
    { label: 'nested 5,000 levels', body: deepJson(5000), contentType: json, status: 400 },
    ...deepAtEachPlace(sample),
    {
      label: 'a 900 KB string',
      body: JSON.stringify({ ...(sample as object), [firstKey]: 'x'.repeat(900_000) }),
      contentType: json,
    },
    { label: 'NUL in every string', body: nulled, contentType: json },
    {
      label: 'more than 1 MiB',
      body: JSON.stringify({ [firstKey]: 'x'.repeat(1_100_000) }),
      contentType: json,
      status: 413,
    },
    { label: 'an array', body: '[1,2,3]', contentType: json, status: 400 },
    { label: 'a string', body: '"text"', contentType: json, status: 400 },
    { label: 'a number', body: '42', contentType: json, status: 400 },
    { label: 'null', body: 'null', contentType: json, status: 400 },
    { label: 'malformed', body: '{"a":', contentType: json, status: 400 },
    {
      label: 'not UTF-8',
      body: new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),
      contentType: json,
      status: 400,
    },
    { label: 'empty', body: '', contentType: json },
    {
      label: '__proto__ pollution',
      body: `{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},${valid.slice(1)}`.replace(
        /,}$/,
        '}',
      ),
      contentType: json,
    },
    { label: 'text/plain', body: valid, contentType: 'text/plain', status: 415 },
    { label: 'no Content-Type', body: new TextEncoder().encode(valid), contentType: null, status: 415 },
    { label: 'form-encoded', body: 'a=1&b=2', contentType: 'application/x-www-form-urlencoded', status: 415 },
  ];
}

/** Generated bodies: schema-valid most of the time, else one place broken, else any JSON at all. */
export function bodyArbitrary(schema: JsonSchema, components: Record<string, JsonSchema>): fc.Arbitrary<unknown> {
  const valid = arbitraryFor(schema, components);
  return fc.oneof(
    { arbitrary: valid, weight: 5 },
    { arbitrary: mutated(valid), weight: 4 },
    { arbitrary: hostileValue, weight: 1 },
  );
}

export function fillPath(path: string, values: Record<string, string>): string {
  return path.replace(/\{([^}]+)\}/g, (_m, name: string) => values[name] ?? 'x');
}

export async function send(base: string, req: FuzzRequest): Promise<Answer> {
  const res = await fetch(base + req.path, { method: req.method, headers: req.headers, body: req.body });
  return { status: res.status, text: await res.text(), contentType: res.headers.get('content-type') ?? '' };
}

/** Why an answer breaks the rules, or null. `undocumented` collects statuses the route's OpenAPI entry lacks. */
export function verdict(op: Operation, res: Answer, undocumented: Set<string>): string | null {
  // The one 5xx a route may give here: its edge is not connected (the fuzz creates edges that never connect).
  if (res.status === 503 && res.text === '{"error":"edge_offline"}' && op.op.responses?.['503']) return null;
  if (res.status >= 500) return `${res.status} ${res.text.slice(0, 200)}`;
  if (/\n\s+at |\.ts:\d+/.test(res.text)) return `stack trace in a ${res.status} body`;
  if (res.status < 400) return null;
  let body: unknown;
  try {
    body = JSON.parse(res.text);
  } catch {
    return `${res.status} with a body that is not JSON: ${res.text.slice(0, 100)}`;
  }
  const keys = body && typeof body === 'object' && !Array.isArray(body) ? Object.keys(body) : [];
  const key = keys[0];
  if (
    keys.length !== 1 ||
    (key !== 'message' && key !== 'error') ||
    typeof (body as Record<string, unknown>)[key] !== 'string'
  ) {
    return `${res.status} body is not {message} or {error}: ${res.text.slice(0, 100)}`;
  }
  const documented = op.op.responses?.[String(res.status)];
  if (!documented) undocumented.add(`${op.method} ${op.path} ${res.status}`);
  const ref: string = documented?.content?.['application/json']?.schema?.$ref ?? '';
  const want = ref.endsWith('/ErrorCode')
    ? 'error'
    : ref.endsWith('/ErrorMessage')
      ? 'message'
      : (errorShapeByStatus[res.status] ?? 'error');
  if (key !== want) return `${res.status} answered {${key}}, the spec says {${want}}`;
  return null;
}
