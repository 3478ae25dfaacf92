import { isJsonObject } from '@smarthome/protocol/common';
/**
 * Organization members may view automations but not change them; the secrets a definition
 * carries are for the owner and admins, who can edit them. Members see the shape with these
 * values replaced:
 * - in a call_url action: every header value, the password of a `user:password@` URL, the
 *   query parameters and the body fields (JSON object, JSON text or form-encoded text) whose
 *   name looks secret (looksSecret);
 * - anywhere in the definition: every value the owner listed in `secrets` (and the list itself).
 * The same applies to traces (the URLs a run called, the marked values wherever they show).
 */
export const REDACTED = '**redacted**';

/** Checked against the name lowercased without separators: `api_key`, `X-Api-Key` and `apiKey` all give "apikey". */
const SECRET_SUBSTRINGS = [
  'token',
  'secret',
  'passw',
  'passphrase',
  'apikey',
  'accesskey',
  'privatekey',
  'credential',
  'signature',
  'authorization',
  'authentication',
  'session',
  'cookie',
  'bearer',
];
/** Whole words only (split at separators and camelCase), so "monkey", "author", "compass" stay visible. */
const SECRET_WORDS = new Set(['key', 'sig', 'pwd', 'pass', 'auth', 'pin', 'otp', 'hmac', 'jwt']);

export function looksSecret(name: string): boolean {
  const flat = name.toLowerCase().replace(/[^a-z0-9]/g, '');
  if (SECRET_SUBSTRINGS.some((s) => flat.includes(s))) return true;
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  return words.some((w) => SECRET_WORDS.has(w));
}

export function redactAutomationSecrets<T>(automation: T): T {
  const secrets = markedSecrets(automation);
  const out = redact(automation) as Record<string, unknown>;
  if (Array.isArray(out?.secrets)) out.secrets = out.secrets.map(() => REDACTED);
  return replaceValues(out, secrets) as T;
}

/** Traces of an automation, for a member: URLs without credentials, the marked values hidden. */
export function redactTraceSecrets<T>(traces: T, secrets: readonly string[]): T {
  return replaceValues(redactUrls(traces), secrets) as T;
}

/** The values the owner marked secret (`secrets: string[]` in the definition). */
export function markedSecrets(automation: unknown): string[] {
  const list = (automation as { secrets?: unknown } | null)?.secrets;
  return Array.isArray(list) ? list.filter((s): s is string => typeof s === 'string' && s.length > 0) : [];
}

function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (!isJsonObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = k === 'call_url' && isJsonObject(v) ? redactCall(v) : redact(v);
  return out;
}

function redactCall(call: Record<string, unknown>): Record<string, unknown> {
  const out = { ...call };
  if (isJsonObject(out.headers))
    out.headers = Object.fromEntries(Object.keys(out.headers).map((name) => [name, REDACTED]));
  if (typeof out.url === 'string') out.url = redactUrl(out.url);
  if (typeof out.body === 'string') out.body = redactTextBody(out.body);
  else if (out.body !== undefined) out.body = redactFields(out.body);
  return out;
}

/** `user:password@` and secret-looking query parameters; the rest (templates included) as written. */
export function redactUrl(url: string): string {
  // Templates ({{ … }}) may make it unparsable: work on the text, not on a URL object.
  const withoutPassword = url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/@:]*):[^/@]*@/i, `$1:${REDACTED}@`);
  const q = withoutPassword.indexOf('?');
  if (q < 0) return withoutPassword;
  const hash = withoutPassword.indexOf('#', q);
  const end = hash < 0 ? withoutPassword.length : hash;
  return withoutPassword.slice(0, q + 1) + redactPairs(withoutPassword.slice(q + 1, end)) + withoutPassword.slice(end);
}

/** `a=1&token=x` → `a=1&token=**redacted**` (names percent-decoded for the check only). */
function redactPairs(text: string): string {
  return text
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 0) return pair;
      const name = pair.slice(0, eq);
      return looksSecret(decodeName(name)) ? `${name}=${REDACTED}` : pair;
    })
    .join('&');
}

function decodeName(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    return name;
  }
}

/** Fields named like secrets, at any depth: their whole value (null and booleans tell nothing and stay). */
function redactFields(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactFields);
  if (!isJsonObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      looksSecret(k) && v !== null && typeof v !== 'boolean' ? REDACTED : redactFields(v),
    ]),
  );
}

/** A string body: JSON text, JSON-like text with templates, or form-encoded; anything else as is. */
function redactTextBody(body: string): string {
  const trimmed = body.trim();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      return JSON.stringify(redactFields(JSON.parse(trimmed)));
    } catch {
      /* templates outside strings: below */
    }
    // "name": value pairs, the value a string, a number, a literal or a template
    return body.replace(
      /"((?:[^"\\]|\\.)*)"(\s*:\s*)("(?:[^"\\]|\\.)*"|\{\{[\s\S]*?\}\}|[^,}\]\s]+)/g,
      (whole, name: string, colon: string) => (looksSecret(name) ? `"${name}"${colon}"${REDACTED}"` : whole),
    );
  }
  return /^[^\s=&]+=/.test(trimmed) ? redactPairs(body) : body;
}

function redactUrls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactUrls);
  if (!isJsonObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, k === 'url' && typeof v === 'string' ? redactUrl(v) : redactUrls(v)]),
  );
}

/** Every occurrence of a marked value in every string (and a number written the same), longest first. */
function replaceValues(value: unknown, secrets: readonly string[]): unknown {
  if (secrets.length === 0) return value;
  const ordered = [...new Set(secrets)].sort((a, b) => b.length - a.length);
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return ordered.reduce((s, secret) => s.split(secret).join(REDACTED), v);
    if (typeof v === 'number') return ordered.includes(String(v)) ? REDACTED : v;
    if (Array.isArray(v)) return v.map(walk);
    if (isJsonObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(value);
}
