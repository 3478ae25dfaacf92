import type { Handled, SpecRouter } from '@smarthome/protocol/server';
import type { Principal } from './auth/service.ts';

/** The caller of a route; public routes get the anonymous principal. */
export type Caller =
  Principal | { userId: ''; via: 'anonymous' | 'fleet' } | { userId: ''; via: 'edge'; edgeId: number };
export type CloudRouter = SpecRouter<Caller>;
export type H<P = unknown, Q = unknown, B = unknown> = Handled<P, Q, B, Caller>;
