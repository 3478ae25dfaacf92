import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiResponse } from '@smarthome/cloud/testing/harness';
import { buildWorld, type ActorName, type World } from './isolation-matrix/world.ts';
import { GROUPS, MATRIX, type Ctx, type Group, type ListCheck, type Probe } from './isolation-matrix/matrix.ts';

/**
 * Tenant isolation, generated from /openapi.json: every route of the document is looked up in
 * the matrix (isolation-matrix/matrix.ts) and tried, with a real cloud and two real edges, as
 * a foreign user (B: without a header, with O's X-Organization-Id, with its own organization's),
 * as a member of O without the admin role (M), and as members holding view-only (V) and control
 * (C) shares, on one of every kind of resource of A (personal) and of organization O.
 * Refused means no 2xx: 403 or 404 (exactly 403 {error:"forbidden"} for a non-member's
 * X-Organization-Id on an org-context route), never 5xx; the owner's reading of the target is
 * identical before and after; lists show nobody what is not theirs. A route of the document
 * without a matrix entry fails, so a new route cannot ship without one.
 */
let w: World;
let doc: {
  paths: Record<string, Record<string, { parameters?: { in: string; name: string }[]; security?: unknown[] }>>;
};

beforeAll(async () => {
  w = await buildWorld();
  doc = (await w.cloud.get('/openapi.json')).body;
}, 90_000); // three edges and a cloud: ~15 s here, far more on a loaded machine
afterAll(async () => {
  for (const c of (w?.cleanups ?? []).splice(0).reverse()) await c();
});

interface DocRoute {
  key: string;
  method: string;
  orgContext: boolean;
}

function docRoutes(): DocRoute[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({
      key: `${method.toUpperCase()} ${path}`,
      method: method.toUpperCase(),
      orgContext: (op.parameters ?? []).some((p) => p.in === 'header' && p.name === 'x-organization-id'),
    })),
  );
}

const groupOf = (actor: ActorName): Group | 'owner' =>
  (Object.entries(GROUPS).find(([, names]) => names.includes(actor))?.[0] as Group | undefined) ?? 'owner';

/** The markers an actor must never find in an answer. */
function hiddenFrom(actor: ActorName): string[] {
  const m = w.markers;
  if (actor.startsWith('X')) return [...m.personal, ...m.shared, ...m.org, ...m.adminOnly, ...m.memberPersonal];
  switch (groupOf(actor)) {
    case 'foreign':
      return [...m.personal, ...m.shared, ...m.org, ...m.adminOnly, ...m.memberPersonal, ...m.formerAdmin];
    case 'admin':
      return [...m.memberPersonal, ...m.formerAdmin];
    case 'member':
      return [...m.personal, ...m.shared, ...m.adminOnly, ...m.formerAdmin];
    case 'viewer':
    case 'controller':
      return [...m.personal, ...m.adminOnly, ...m.memberPersonal, ...m.formerAdmin];
    default:
      return [];
  }
}

function send(method: string, actor: ActorName, path: string, body?: unknown): Promise<ApiResponse> {
  const a = w.actors[actor];
  return w.cloud.request(method, path, { token: a.token, org: a.org, body });
}

const ctx = (): Ctx => ({
  w,
  async read(actor, path) {
    const res = await send('GET', actor, path);
    if (res.status !== 200) throw new Error(`snapshot ${actor} GET ${path} → ${res.status} ${res.text}`);
    return res.body;
  },
});

const is2xx = (status: number) => status >= 200 && status < 300;
const expand = (deny: Probe['deny']): ActorName[] => [
  ...new Set(deny.flatMap((d) => (d in GROUPS ? GROUPS[d as Group] : [d as ActorName]))),
];

/** Runs matrix probes and list checks, collecting what went wrong, one line each. */
class Walker {
  readonly problems: string[] = [];
  /** route key → actors that were refused on it */
  readonly tried = new Map<string, Set<ActorName>>();

  private leaks(route: string, actor: ActorName, what: string, res: ApiResponse): void {
    for (const marker of hiddenFrom(actor)) {
      if (res.text.includes(marker)) this.problems.push(`${route} [${what}] as ${actor}: answer shows ${marker}`);
    }
  }

  private refusal(route: DocRoute, probe: Probe, actor: ActorName, res: ApiResponse): string | null {
    if (is2xx(res.status)) return `got ${res.status} ${res.text.slice(0, 200)}`;
    const a = w.actors[actor];
    if (route.orgContext && a.org === w.O && !a.memberOfO) {
      return res.status === 403 && isDeepStrictEqual(res.body, { error: 'forbidden' })
        ? null
        : `a non-member's X-Organization-Id must be 403 {error:"forbidden"}, got ${res.status} ${res.text}`;
    }
    if (![403, 404, ...(probe.refusals ?? [])].includes(res.status))
      return `got ${res.status} ${res.text.slice(0, 200)} (a refusal is 403/404${probe.refusals ? `/${probe.refusals}` : ''})`;
    const shape = res.status === 403 ? 'error' : 'message';
    if (typeof res.body?.[shape] !== 'string') return `${res.status} without {${shape}}: ${res.text.slice(0, 200)}`;
    return null;
  }

  async probe(route: DocRoute, probe: Probe): Promise<void> {
    const label = `${route.key} [${probe.what}]`;
    // A target the owner cannot read back is reported (it may be gone), and the walk goes on.
    const snapshot = () => probe.snapshot().catch((err: Error) => `unreadable: ${err.message}`);
    const before = await snapshot();
    if (route.method === 'GET') {
      if (!probe.allow?.length && !probe.noneMay)
        this.problems.push(`${label}: a GET probe names who may read it (allow), or why nobody may (noneMay)`);
      for (const actor of probe.allow ?? []) {
        const res = await send('GET', actor, probe.path, probe.body);
        if (!is2xx(res.status))
          this.problems.push(`${label} as ${actor} (allowed): ${res.status} ${res.text.slice(0, 200)}`);
        this.leaks(route.key, actor, probe.what, res);
      }
    }
    const actors = expand(probe.deny);
    if (actors.length === 0) this.problems.push(`${label}: denies nobody`);
    for (const actor of actors) {
      const res = await send(route.method, actor, probe.path, probe.body);
      const wrong = this.refusal(route, probe, actor, res);
      if (wrong) this.problems.push(`${label} as ${actor}: ${wrong}`);
      this.leaks(route.key, actor, probe.what, res);
      this.tried.set(route.key, (this.tried.get(route.key) ?? new Set()).add(actor));
    }
    const after = await snapshot();
    if (!isDeepStrictEqual(before, after)) {
      this.problems.push(
        `${label}: the target changed\n  before ${JSON.stringify(before)}\n  after  ${JSON.stringify(after)}`,
      );
    }
  }

  async list(route: DocRoute, check: ListCheck): Promise<void> {
    const label = `${route.key} [${check.path}]`;
    for (const actor of expand(['foreign', 'admin', 'member', 'viewer', 'controller'])) {
      const res = await send('GET', actor, check.path);
      const a = w.actors[actor];
      if (route.orgContext && a.org === w.O && !a.memberOfO) {
        if (res.status !== 403 || !isDeepStrictEqual(res.body, { error: 'forbidden' }))
          this.problems.push(
            `${label} as ${actor}: a non-member's X-Organization-Id must be 403 {error:"forbidden"}, got ${res.status}`,
          );
        this.tried.set(route.key, (this.tried.get(route.key) ?? new Set()).add(actor));
      } else if (res.status !== 200) {
        this.problems.push(
          `${label} as ${actor}: ${res.status} ${res.text.slice(0, 200)} (a list answers the caller's own rows)`,
        );
      }
      this.leaks(route.key, actor, check.path, res);
    }
    if (check.sees) {
      const [actor, marker] = check.sees;
      const res = await send('GET', actor, check.path);
      if (res.status !== 200 || !res.text.includes(marker))
        this.problems.push(`${label} as ${actor}: should show ${marker} (${res.status})`);
    }
  }
}

describe('isolation matrix generated from /openapi.json', () => {
  it('has an entry for every route of the document (a new route needs one) and none for a route the document lacks', () => {
    const keys = docRoutes().map((r) => r.key);
    expect(keys.length).toBeGreaterThan(70);
    expect(
      { missing: keys.filter((k) => !MATRIX[k]), stale: Object.keys(MATRIX).filter((k) => !keys.includes(k)) },
      'routes without an entry in tools/src/e2e/isolation-matrix/matrix.ts (a new route needs one), entries without a route',
    ).toEqual({ missing: [], stale: [] });
    // Only a route that takes no bearer token may be exempt as public.
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const entry = MATRIX[`${method.toUpperCase()} ${path}`];
        if ('exempt' in entry && entry.exempt === 'public') expect(op.security, `${method} ${path}`).toEqual([]);
      }
    }
  });

  it("refuses every actor on what is not theirs, changes nothing, and lists nobody else's rows", async () => {
    const walker = new Walker();
    const x = ctx();
    for (const route of docRoutes()) {
      const entry = MATRIX[route.key];
      if (!entry || 'exempt' in entry) continue;
      for (const probe of entry.probes?.(x) ?? []) await walker.probe(route, probe);
      for (const check of entry.lists?.(x) ?? []) await walker.list(route, check);
    }
    // Every org-context route was tried with a non-member's X-Organization-Id.
    const untried = docRoutes()
      .filter((r) => r.orgContext && !walker.tried.get(r.key)?.has('B@O'))
      .map((r) => r.key);
    expect(untried, "org-context routes never tried as B with O's X-Organization-Id").toEqual([]);
    expect(walker.problems).toEqual([]);
    // the lamps of A and O never got a command from anyone
    expect(Object.values(w.lamps).flatMap((l) => l.commands)).toEqual([]);
  }, 120_000);
});
