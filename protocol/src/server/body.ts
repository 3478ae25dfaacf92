import type { Context } from 'hono';
import { badRequest, payloadTooLarge, unsupportedMediaType } from './errors.ts';
import { parseJsonBody } from './json.ts';

export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/**
 * Reads the request body; no more than `limit` bytes get into memory. With a Content-Length,
 * Node's HTTP parser delivers that many bytes and no more, so the body is read whole: on
 * @hono/node-server straight off the socket, without the web stream that a Request's `body`
 * builds (the most expensive step of a small POST). Without one (chunked), the bytes are
 * counted as they arrive.
 */
export async function readBodyBytes(c: Context, limit = DEFAULT_BODY_LIMIT): Promise<Uint8Array> {
  const declared = c.req.header('content-length');
  if (declared !== undefined && Number(declared) > limit) throw payloadTooLarge();
  const bytes =
    declared !== undefined
      ? new Uint8Array(await c.req.raw.arrayBuffer())
      : await readStreamLimited(c.req.raw.body, limit);
  // a Request built in this process may declare less than it carries
  if (bytes === null || bytes.byteLength > limit) throw payloadTooLarge();
  return bytes;
}

/** Reads a whole stream, or stops (cancelling it) and answers null once it exceeds `limit` bytes. */
export async function readStreamLimited(
  stream: ReadableStream<Uint8Array> | null,
  limit: number,
): Promise<Uint8Array | null> {
  if (!stream) return new Uint8Array(0);
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/** application/json, or any `+json` type (application/merge-patch+json), with or without parameters. */
export function isJsonContentType(header: string | undefined): boolean {
  const type = header?.split(';', 1)[0].trim().toLowerCase();
  return type !== undefined && /^application\/(?:[\w.-]+\+)?json$/.test(type);
}

/**
 * Reads and parses a JSON body (parseJsonBody: depth-bounded). A body must be declared JSON
 * (415 otherwise; an empty one needs no Content-Type, as for routes whose fields are all
 * optional); anything that is not a JSON object is a 400.
 */
export async function readJsonObject(c: Context, limit = DEFAULT_BODY_LIMIT): Promise<Record<string, unknown>> {
  const bytes = await readBodyBytes(c, limit);
  if (bytes.byteLength === 0) return {};
  if (!isJsonContentType(c.req.header('content-type'))) throw unsupportedMediaType();
  const value = parseJsonBody(bytes);
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw badRequest('body must be a JSON object');
  return value as Record<string, unknown>;
}
