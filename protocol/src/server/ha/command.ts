import type { z } from 'zod';
import type { HaSession } from './session.ts';

/** A command handler: returns the `result` (sent as success), or throws HaCommandError; subscriptions register via the session. */
export interface HaCommand<P, S extends z.ZodType = z.ZodType> {
  schema: S;
  handle(session: HaSession<P>, msg: z.output<S>): Promise<unknown> | unknown;
}
export type HaCommands<P> = Record<string, HaCommand<P, z.ZodType>>;

/** A handler that has already answered (pong; subscribe_entities sends its result before its first event). */
export const ALREADY_ANSWERED = Symbol('already answered');

export const command = <S extends z.ZodType>(
  schema: S,
  handle: HaCommand<unknown, S>['handle'],
): HaCommand<unknown, S> => ({ schema, handle });
