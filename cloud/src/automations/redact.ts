/**
 * Organization members may view automations but not change them; the secrets an action
 * carries (call_url headers such as Authorization, credentials in its URL) are for the
 * owner and admins, who can edit them. Members see the shape with those values replaced.
 */
export const REDACTED = '**redacted**';

export function redactAutomationSecrets<T>(automation: T): T {
  return redact(automation) as T;
}

function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = k === 'call_url' && v && typeof v === 'object' && !Array.isArray(v) ? redactCall(v as Record<string, unknown>) : redact(v);
  return out;
}

function redactCall(call: Record<string, unknown>): Record<string, unknown> {
  const out = { ...call };
  if (out.headers && typeof out.headers === 'object') {
    out.headers = Object.fromEntries(Object.keys(out.headers).map((name) => [name, REDACTED]));
  }
  if (typeof out.url === 'string') out.url = withoutPassword(out.url);
  return out;
}

function withoutPassword(url: string): string {
  // Templates ({{ … }}) may make it unparsable: then only a literal user:password@ is hidden.
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/@:]*):[^/@]*@/i, `$1:${REDACTED}@`);
}
