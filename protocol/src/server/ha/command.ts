import type { z } from 'zod';
import type { HaBackend, Unsubscribe } from './backend.ts';

/**
 * What a command handler may do with its session (HaSession implements it): read the caller and
 * the backend, answer, send events and register subscriptions.
 */
export interface HaCommandSession<P> {
  readonly backend: HaBackend<P>;
  readonly principal: P;
  setCoalesce(on: boolean): void;
  addSubscription(id: number, unsubscribe: Unsubscribe): void;
  removeSubscription(id: number): boolean;
  sendEvent(id: number, event: unknown): void;
  sendResult(id: number, result: unknown): void;
  sendPong(id: number): void;
}

/** A command handler: returns the `result` (sent as success), or throws HaCommandError; subscriptions register via the session. */
export interface HaCommand<P, S extends z.ZodType = z.ZodType> {
  schema: S;
  handle(session: HaCommandSession<P>, msg: z.output<S>): Promise<unknown> | unknown;
}
export type HaCommands<P> = Record<string, HaCommand<P, z.ZodType>>;

/** A handler that has already answered (pong; subscribe_entities sends its result before its first event). */
export const ALREADY_ANSWERED = Symbol('already answered');

export const command = <S extends z.ZodType>(
  schema: S,
  handle: HaCommand<unknown, S>['handle'],
): HaCommand<unknown, S> => ({ schema, handle });
