import { expect } from 'vitest';
import type { MqttClient } from 'mqtt';
import type { ApiResponse, TestCloud } from '@smarthome/cloud/testing/harness';
import type { Edge } from '@smarthome/edge/edge';

/**
 * The isolation matrix's world: one real cloud and two real edges paired over the tunnel, and
 * one of every kind of resource, owned by A personally and by organization O (admin A).
 *
 * Actors (the name after @ is the X-Organization-Id sent):
 * - B: a foreign user with an organization of its own (OB); B, B@O (O's header, not a member), B@OB;
 * - M: a member of O without the admin role; M, M@O;
 * - V: a member of O holding view-only shares of A's "shared board" and entity light.desk_lamp_desk; V, V@O;
 * - C: a member of O holding control shares of the same; C, C@O;
 * - A, A@O: the owner, who reads resources back (snapshots) and proves the probes name real things;
 *   as O's admin, A must reach nothing of M's personal things (M's zone, board, VoIP account, token, edge);
 * - X: a former admin of O, with an organization of its own (OX). While in O, X shared a lamp of X's
 *   own edge and X's own board into O, and created a zone, a board and an edge for O; then X left.
 *   What X shared is X's alone again; what X made for O is O's, and X is a foreigner to it (X, X@O).
 */
export const ACTOR_NAMES = ['A', 'A@O', 'X', 'X@O', 'B', 'B@O', 'B@OB', 'M', 'M@O', 'V', 'V@O', 'C', 'C@O'] as const;
export type ActorName = (typeof ACTOR_NAMES)[number];
export interface Actor {
  name: ActorName;
  token: string;
  org?: string;
  memberOfO: boolean;
}

export const DESK = 'light.desk_lamp_desk'; // A's personal edge, shared into O with V (view) and C (control)
export const ATTIC = 'light.attic_lamp_attic'; // A's personal edge, not shared
export const HALL = 'light.hall_lamp_hall'; // O's edge
export const PORCH = 'light.porch_lamp_porch'; // X's personal edge, shared into O while X was an admin of O
export const MEDIA_URI = 'media-source://demo/tones/a4-440hz.wav';
export const BOARD_CONFIG = { views: [{ title: 'main', cards: [{ type: 'entities' }] }] };

export type User = Awaited<ReturnType<TestCloud['user']>>;

/** A light discovered over MQTT on an edge, with the commands its device receives. */
export interface Lamp {
  entityId: string;
  client: MqttClient;
  commands: string[];
}

export interface World {
  cloud: TestCloud;
  users: Record<'A' | 'B' | 'M' | 'V' | 'C' | 'R' | 'X', User>;
  O: string;
  OB: string;
  OX: string;
  actors: Record<ActorName, Actor>;
  edges: { A: { id: number; edge: Edge }; O: { id: number; edge: Edge }; X: { id: number; edge: Edge } };
  lamps: { desk: Lamp; attic: Lamp; hall: Lamp; porch: Lamp };
  /** X's board, shared into O while X was an admin of O */
  xBoard: number;
  /** what X created in O while an admin of O (the edge is registered, never connected) */
  xMadeForO: { zone: number; board: number; edge: number };
  /** A's personal resources */
  a: {
    zone: number;
    transferZone: number;
    privateBoard: number;
    sharedBoard: number;
    voip: number;
    pat: string;
    transfer: number;
    subscription: string;
    entry: number;
    flow: string;
    automation: { id: string; webhook_id: string };
    deskDevice: number;
  };
  /** M's personal resources (the edge is registered, never connected) */
  m: { zone: number; board: number; voip: number; pat: string; edge: number };
  /** organization O's resources */
  o: {
    zone: number;
    board: number;
    voip: number;
    entry: number;
    flow: string;
    automation: { id: string; webhook_id: string };
    hallDevice: number;
    invitation: { id: string; token: string };
    shareToV: number;
    shareToC: number;
    /** a signed media path of O's edge (its signature is not valid for A's edge) */
    media: { token: string; file: string };
  };
  /**
   * Strings that only the owner's views of a resource contain, by who may see them: personal
   * (A only), shared (A, V, C), org (A and O's members), adminOnly (A), memberPersonal (M only),
   * formerAdmin (X only, once X has left O).
   */
  markers: {
    personal: string[];
    shared: string[];
    org: string[];
    adminOnly: string[];
    memberPersonal: string[];
    formerAdmin: string[];
  };
  cleanups: Array<() => Promise<unknown> | unknown>;
}

/** A fixture request's answer, failing the build of the world (with the body) unless it has this status. */
export function ok(res: ApiResponse, status: number, what: string): ApiResponse {
  expect(res.status, `${what}: ${res.text}`).toBe(status);
  return res;
}
