import { z } from 'zod';

/** ISO 8601 UTC timestamp string. */
export const Timestamp = z.iso.datetime().meta({ description: 'ISO 8601 UTC timestamp' });
export const IntId = z.number().int().positive();
/** Path parameter carrying an integer id; a non-numeric value is a 404 at the route, not a 400. */
// Ids are 64-bit in the database but handled as JS numbers: a larger one can name nothing that exists.
export const IntIdParam = z
  .string()
  .regex(/^[0-9]{1,16}$/, 'must be an integer id')
  .refine((s) => Number.isSafeInteger(Number(s)), 'must be an integer id');
export const IdParams = z.object({ id: z.string() });
export const MessageBody = z.object({ message: z.string() }).meta({ id: 'Message' });
export const OkBody = z.object({ ok: z.literal(true) }).meta({ id: 'Ok' });
export const Uuid = z.uuid();
/** A free-form JSON object. */
export const JsonObject = z.record(z.string(), z.unknown());
/** Whether a parsed JSON value is an object (not null, not an array): JsonObject's test without a parse. */
export const isJsonObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
/**
 * The one form an e-mail address is stored and matched in: Unicode NFKC (so look-alike
 * compatibility characters fold to one address), then lower-case.
 */
export const normalizeEmail = (email: string): string => email.normalize('NFKC').toLowerCase();
export const Email = z.email().max(254).transform(normalizeEmail);
export const NonEmpty = (max = 200) => z.string().trim().min(1).max(max);
