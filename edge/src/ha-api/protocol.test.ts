import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { Edge } from '../edge.ts';
import { waitFor } from '../testing/edge.ts';
import { useEdge } from '../testing/use-edge.ts';

/** HA's WebSocket protocol edge cases, over a raw `ws` socket against a real edge. */

let edge: Edge;
let token: string;

useEdge({}, (started) => {
  edge = started;
  token = edge.tokens.create('proto').token;
});

interface Client {
  /** every frame received, as sent (an array when coalesced) */
  frames: unknown[];
  /** every message, arrays flattened */
  messages: Record<string, any>[];
  closed: Promise<{ code: number; reason: string }>;
  send(msg: unknown): void;
  next(pred: (m: Record<string, any>) => boolean, what?: string): Promise<Record<string, any>>;
  ws: WebSocket;
}

async function open(path = '/api/websocket'): Promise<Client> {
  const ws = new WebSocket(`ws://127.0.0.1:${edge.ports.http}${path}`);
  const frames: unknown[] = [];
  const messages: Record<string, any>[] = [];
  ws.on('message', (data) => {
    const parsed = JSON.parse(data.toString());
    frames.push(parsed);
    messages.push(...(Array.isArray(parsed) ? parsed : [parsed]));
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  let seen = 0;
  return {
    frames,
    messages,
    closed,
    ws,
    send: (msg) => ws.send(typeof msg === 'string' ? msg : JSON.stringify(msg)),
    async next(pred, what = 'message') {
      const found = await waitFor(() => messages.slice(seen).find(pred), 3000, what);
      seen = messages.indexOf(found) + 1;
      return found;
    },
  };
}

async function authed(): Promise<Client> {
  const c = await open();
  await c.next((m) => m.type === 'auth_required');
  c.send({ type: 'auth', access_token: token });
  await c.next((m) => m.type === 'auth_ok');
  return c;
}

describe('HA WebSocket protocol on the edge', () => {
  it('starts with auth_required and accepts a local token', async () => {
    const c = await open();
    expect(await c.next((m) => m.type === 'auth_required')).toEqual({ type: 'auth_required', ha_version: '2026.11.0' });
    c.send({ type: 'auth', access_token: token });
    expect(await c.next((m) => m.type === 'auth_ok')).toEqual({ type: 'auth_ok', ha_version: '2026.11.0' });
    c.ws.close();
  });

  it('a wrong token gets auth_invalid and the socket closes', async () => {
    const c = await open();
    c.send({ type: 'auth', access_token: 'sht_wrong' });
    expect(await c.next((m) => m.type === 'auth_invalid')).toEqual({
      type: 'auth_invalid',
      message: 'Invalid access token or password',
    });
    expect((await c.closed).code).toBe(4001);
  });

  it('a malformed auth message gets auth_invalid and the socket closes', async () => {
    const c = await open();
    c.send({ type: 'get_states', id: 1 });
    const m = await c.next((x) => x.type === 'auth_invalid');
    expect(m.message).toMatch(/^Auth message incorrectly formatted: /);
    await c.closed;
  });

  it('unknown command, invalid format and id reuse answer as HA does', async () => {
    const c = await authed();
    c.send({ id: 1, type: 'no_such_command' });
    expect(await c.next((m) => m.id === 1)).toEqual({
      id: 1,
      type: 'result',
      success: false,
      error: { code: 'unknown_command', message: 'Unknown command.' },
    });
    c.send({ type: 'ping' });
    expect(await c.next((m) => m.id === 0)).toEqual({
      id: 0,
      type: 'result',
      success: false,
      error: { code: 'invalid_format', message: 'Message incorrectly formatted.' },
    });
    c.send({ id: 2, type: 'ping' });
    expect(await c.next((m) => m.id === 2)).toEqual({ id: 2, type: 'pong' });
    c.send({ id: 2, type: 'get_states' });
    expect(await c.next((m) => m.id === 2 && m.type === 'result')).toEqual({
      id: 2,
      type: 'result',
      success: false,
      error: { code: 'id_reuse', message: 'Identifier values have to increase.' },
    });
    c.send({ id: 3, type: 'call_service', domain: 'switch' });
    const bad = await c.next((m) => m.id === 3);
    expect(bad).toMatchObject({ success: false, error: { code: 'invalid_format' } });
    expect(bad.error.message).toMatch(/service/);
    c.send({ id: 4, type: 'unsubscribe_events', subscription: 99 });
    expect(await c.next((m) => m.id === 4)).toMatchObject({
      success: false,
      error: { code: 'not_found', message: 'Subscription not found.' },
    });
    c.ws.close();
  });

  it('invalid JSON closes the socket', async () => {
    const c = await authed();
    c.send('{not json');
    expect((await c.closed).code).toBe(1003);
  });

  it('JSON nested deeper than 64 levels closes the socket as invalid JSON (what walks it would overflow)', async () => {
    const c = await authed();
    c.send(
      `{"id":1,"type":"fire_event","event_type":"deep","event_data":{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`,
    );
    expect((await c.closed).code).toBe(1003);
  });

  it('fire_event reaches subscribers of that event type, not others; unsubscribe_events stops it', async () => {
    const c = await authed();
    c.send({ id: 1, type: 'subscribe_events', event_type: 'doorbell_pressed' });
    c.send({ id: 2, type: 'subscribe_events', event_type: 'something_else' });
    await c.next((m) => m.id === 2 && m.type === 'result');
    c.send({ id: 3, type: 'fire_event', event_type: 'doorbell_pressed', event_data: { door: 'front' } });
    const event = await c.next((m) => m.type === 'event');
    expect(event).toMatchObject({
      id: 1,
      type: 'event',
      event: {
        event_type: 'doorbell_pressed',
        data: { door: 'front' },
        origin: 'REMOTE',
        context: { parent_id: null },
      },
    });
    expect(await c.next((m) => m.id === 3)).toMatchObject({ success: true, result: { context: { user_id: null } } });
    c.send({ id: 4, type: 'unsubscribe_events', subscription: 1 });
    expect(await c.next((m) => m.id === 4)).toEqual({ id: 4, type: 'result', success: true, result: null });
    c.send({ id: 5, type: 'fire_event', event_type: 'doorbell_pressed' });
    await c.next((m) => m.id === 5);
    expect(c.messages.filter((m) => m.type === 'event')).toHaveLength(1);
    c.ws.close();
  });

  it('coalesces messages into one JSON array when the client asks for it', async () => {
    const c = await authed();
    c.send({ id: 1, type: 'supported_features', features: { coalesce_messages: 1 } });
    await c.next((m) => m.id === 1);
    const before = c.frames.length;
    // subscribe_entities answers with its result and its first event at once → one frame
    c.send({ id: 2, type: 'subscribe_entities' });
    await c.next((m) => m.id === 2 && m.type === 'event');
    expect(c.frames.slice(before)).toEqual([
      [
        { id: 2, type: 'result', success: true, result: null },
        { id: 2, type: 'event', event: { a: {} } },
      ],
    ]);
    c.ws.close();
  });

  it('without coalescing, messages go out one per frame', async () => {
    const c = await authed();
    const before = c.frames.length;
    c.send({ id: 1, type: 'subscribe_entities' });
    await c.next((m) => m.id === 1 && m.type === 'event');
    expect(c.frames.slice(before)).toEqual([
      { id: 1, type: 'result', success: true, result: null },
      { id: 1, type: 'event', event: { a: {} } },
    ]);
    c.ws.close();
  });

  it('a revoked token ends the session at its next command', async () => {
    const created = edge.tokens.create('short-lived');
    const c = await open();
    c.send({ type: 'auth', access_token: created.token });
    await c.next((m) => m.type === 'auth_ok');
    edge.tokens.revoke(created.id);
    c.send({ id: 1, type: 'get_states' });
    expect(await c.next((m) => m.type === 'auth_invalid')).toMatchObject({ type: 'auth_invalid' });
    expect((await c.closed).code).toBe(4001);
    expect(c.messages.some((m) => m.id === 1)).toBe(false);
  });
});
