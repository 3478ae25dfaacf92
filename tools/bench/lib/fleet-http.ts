/** The fleet bench's HTTP side: requests with bounded concurrency and time, and a health-check stall probe. */

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** delta→event ms of an app socket's message: an event whose new state carries the edge's `sent_at` stamp; null otherwise */
export function eventLatencyMs(message: any): number | null {
  const sentAt = message.event?.data?.new_state?.attributes?.sent_at;
  return typeof sentAt === 'number' && sentAt > 0 ? Date.now() - sentAt : null;
}

/** The `p` quantile (0..1) of `xs`; NaN when there is none. */
export const pct = (xs: number[], p: number) =>
  xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]! : NaN;

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function pool<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]);
      }
    }),
  );
  return out;
}

/** GET /healthz every 100 ms; the longest answer is the longest stall a health check saw. */
export function stallProbe(url: () => string) {
  let max = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const t = performance.now();
      try {
        await fetch(`${url()}/healthz`, { signal: AbortSignal.timeout(30_000) });
      } catch {
        /* down during a restart */
      }
      max = Math.max(max, performance.now() - t);
      await sleep(100);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return max;
    },
    reset() {
      max = 0;
    },
  };
}

export async function api(
  base: string,
  method: string,
  pathName: string,
  body?: unknown,
  token?: string,
  timeoutMs = 30_000,
): Promise<any> {
  const res = await fetch(`${base}${pathName}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${pathName}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}
