import type { ServerResponse } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigFlowComponent } from '../../config-flow/component.ts';
import { InMemoryConfigEntryStore, InMemoryDeviceRegistry, InMemoryStates } from '../../config-flow/memory-ports.ts';
import type { Edge } from '../../edge.ts';
import { startEdge, tempDir } from '../../testing/edge.ts';
import { createOAuthDemoCloudIntegration } from './index.ts';
import { sendJson, tokenEndpoint, type TokenRequest } from '../../testing/oauth-token-endpoint.ts';

/** A tiny OAuth token endpoint: records requests, answers what the test says. */
let requests: TokenRequest[];
let answer: (req: TokenRequest, res: ServerResponse) => void;
const endpoint = tokenEndpoint((r, res) => {
  requests.push(r);
  answer(r, res);
});

describe('oauth_demo_cloud on a whole edge', () => {
  const KEYS = [
    'EDGE_OAUTH_CLIENT_ID',
    'EDGE_OAUTH_CLIENT_SECRET',
    'EDGE_OAUTH_AUTHORIZE_URL',
    'EDGE_OAUTH_TOKEN_URL',
    'EDGE_OAUTH_REDIRECT_URI',
  ] as const;
  let saved: Record<string, string | undefined>;
  let dir: { dir: string; cleanup: () => void };
  let edge: Edge;

  beforeEach(async () => {
    saved = Object.fromEntries(KEYS.map((k) => [k, process.env[k]]));
    dir = tempDir();
    // The redirect URI is the edge's own callback; the port is only known after start, which is fine for the token request.
    Object.assign(process.env, {
      EDGE_OAUTH_CLIENT_ID: 'edge-client',
      EDGE_OAUTH_CLIENT_SECRET: 'edge-secret',
      EDGE_OAUTH_AUTHORIZE_URL: 'https://auth.demo-cloud.test/authorize',
      EDGE_OAUTH_TOKEN_URL: endpoint.url(),
      EDGE_OAUTH_REDIRECT_URI: 'http://edge.local/v1/config_flow/oauth/callback',
    });
    requests = [];
    answer = (r, res) => {
      if (r.form.code === 'good-code')
        sendJson(res, 200, { access_token: 'at-edge', token_type: 'bearer', expires_in: 3600 });
      else sendJson(res, 400, { error: 'invalid_grant' });
    };
    edge = await startEdge(dir.dir);
  });
  afterEach(async () => {
    await edge.stop();
    dir.cleanup();
    for (const k of KEYS) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  });

  it('completes the flow through the callback without a bearer token', async () => {
    const base = `http://127.0.0.1:${edge.ports.http}`;
    const { token } = edge.tokens.create('oauth-test');
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const startRes = await fetch(`${base}/v1/config_flow`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ handler: 'oauth_demo_cloud' }),
    });
    expect(startRes.status).toBe(200);
    const started = (await startRes.json()) as any;
    expect(started).toMatchObject({ type: 'form', handler: 'oauth_demo_cloud', stepId: 'auth' });
    const authorize = new URL(started.description_placeholders.authorize_url);
    expect(authorize.searchParams.get('redirect_uri')).toBe('http://edge.local/v1/config_flow/oauth/callback');
    const state = authorize.searchParams.get('state')!;

    const res = await fetch(`${base}/v1/config_flow/oauth/callback?code=good-code&state=${encodeURIComponent(state)}`, {
      redirect: 'manual',
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`/integrations/oauth?flow_id=${started.flowId}`);
    // the portal reads the result with the caller's token; without one, nothing
    expect((await fetch(`${base}/v1/config_flow/${started.flowId}`)).status).toBe(401);
    const read = await fetch(`${base}/v1/config_flow/${started.flowId}`, { headers: auth });
    expect(await read.json()).toMatchObject({
      type: 'create_entry',
      flowId: started.flowId,
      title: 'OAuth Demo Cloud',
    });
    expect(requests.map((r) => r.form.code)).toEqual(['good-code']);

    expect((await fetch(`${base}/v1/config_entries`)).status).toBe(401);
    const entries = (await (await fetch(`${base}/v1/config_entries`, { headers: auth })).json()) as {
      domain: string;
    }[];
    // (the edge keeps its own "mqtt" system entry next to it)
    expect(entries.filter((e) => e.domain !== 'mqtt')).toEqual([
      expect.objectContaining({ domain: 'oauth_demo_cloud', title: 'OAuth Demo Cloud', state: 'loaded' }),
    ]);
    expect(JSON.stringify(entries)).not.toContain('at-edge');
    const unknown = await fetch(`${base}/v1/config_flow/oauth/callback?code=good-code&state=nope`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ message: 'unknown or expired state' });
  });
});

describe('oauth_demo_cloud entry', () => {
  it('refreshes the access token before it expires and stores it in the entry', async () => {
    requests = [];
    const clock = Date.UTC(2026, 10, 1);
    answer = (r, res) => {
      if (r.form.grant_type === 'authorization_code')
        sendJson(res, 200, { access_token: 'at-1', refresh_token: 'rt-1', token_type: 'Bearer', expires_in: 61 });
      else if (r.form.grant_type === 'refresh_token' && r.form.refresh_token === 'rt-1')
        sendJson(res, 200, { access_token: 'at-2', token_type: 'Bearer', expires_in: 3600 });
      else sendJson(res, 400, { error: 'invalid_grant' });
    };
    const store = new InMemoryConfigEntryStore();
    const component = new ConfigFlowComponent({
      entries: store,
      devices: new InMemoryDeviceRegistry(),
      states: new InMemoryStates(),
      integrations: [
        createOAuthDemoCloudIntegration({
          clientId: 'c',
          clientSecret: 's',
          authorizeUrl: 'https://auth.test/authorize',
          tokenUrl: endpoint.url(),
          redirectUri: 'http://edge.local/cb',
          refreshMarginMs: 60_000,
          now: () => clock,
        }),
      ],
    });
    await component.start();
    try {
      const start = await component.flows.startFlow('oauth_demo_cloud');
      if (start.type !== 'form') throw new Error('expected a form');
      const state = new URL(start.description_placeholders!.authorize_url).searchParams.get('state')!;
      const done = await component.flows.advance(start.flowId, { code: 'c1', state });
      expect(done).toMatchObject({ type: 'create_entry', result: { config_entry_id: 1 } });
      // expires_at - margin is 1 s away.
      await new Promise((r) => setTimeout(r, 1300));
      expect(requests.map((r) => r.form.grant_type)).toEqual(['authorization_code', 'refresh_token']);
      expect(requests[1].form).toEqual({
        grant_type: 'refresh_token',
        refresh_token: 'rt-1',
        client_id: 'c',
        client_secret: 's',
      });
      expect(store.get(1)?.data.token).toEqual({
        access_token: 'at-2',
        token_type: 'Bearer',
        expires_in: 3600,
        expires_at: clock / 1000 + 3600,
        refresh_token: 'rt-1',
      });
    } finally {
      await component.stop();
    }
  });
});
