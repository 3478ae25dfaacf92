import type { ServerResponse } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConfigFlowComponent } from '../../config-flow/component.ts';
import type { InMemoryConfigEntryStore } from '../../config-flow/memory-ports.ts';
import { serveConfigFlows, type ConfigFlowHarness } from '../../testing/config-flow.ts';
import type { TestServer } from '../../testing/server.ts';
import { createOAuthDemoCloudIntegration } from './index.ts';
import { sendJson, tokenEndpoint, type TokenRequest } from '../../testing/oauth-token-endpoint.ts';

/** A tiny OAuth token endpoint: records requests, answers what the test says. */
let requests: TokenRequest[];
let answer: (req: TokenRequest, res: ServerResponse) => void;
const endpoint = tokenEndpoint((r, res) => {
  requests.push(r);
  answer(r, res);
});

describe('oauth_demo_cloud config flow (authorization code)', () => {
  let h: ConfigFlowHarness<object>;
  let server: TestServer;
  let component: ConfigFlowComponent;
  let store: InMemoryConfigEntryStore;
  let clock: number;

  beforeEach(async () => {
    clock = Date.UTC(2026, 10, 1);
    requests = [];
    answer = (r, res) => {
      if (r.form.code === 'good-code')
        sendJson(res, 200, {
          access_token: 'at-1',
          refresh_token: 'rt-1',
          token_type: 'bearer',
          expires_in: 3600,
          scope: 'devices',
        });
      else sendJson(res, 400, { error: 'invalid_grant', error_description: 'code expired' });
    };
    h = await serveConfigFlows({
      integrations: () => [
        createOAuthDemoCloudIntegration({
          clientId: 'edge-client',
          clientSecret: 'edge-secret',
          scope: 'devices',
          authorizeUrl: 'https://auth.demo-cloud.test/authorize?audience=home',
          tokenUrl: endpoint.url(),
          redirectUri: 'http://edge.local:8123/auth/external/callback',
          timeoutMs: 300,
          now: () => clock,
        }),
      ],
      flowTtlMs: 60_000,
      now: () => clock,
    });
    ({ server, component, store } = h);
  });
  afterEach(() => h.close());

  const start = async () => {
    const res = await server.json('POST', '/v1/config_flow', { handler: 'oauth_demo_cloud' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      type: 'form',
      flowId: expect.stringMatching(/^[0-9a-f]{32}$/),
      handler: 'oauth_demo_cloud',
      stepId: 'auth',
      errors: {},
      data_schema: [
        { name: 'code', type: 'string', required: false },
        { name: 'state', type: 'string', required: true },
        { name: 'error', type: 'string', required: false },
      ],
      description_placeholders: { authorize_url: expect.any(String) },
    });
    const url = new URL(res.body.description_placeholders.authorize_url);
    return { flowId: res.body.flowId as string, url, state: url.searchParams.get('state')! };
  };
  const advance = (flowId: string, body: object) => server.json('POST', `/v1/config_flow/${flowId}/advance`, body);

  it('starts with a form whose authorize_url placeholder carries a random state', async () => {
    const a = await start();
    const b = await start();
    expect(a.url.origin + a.url.pathname).toBe('https://auth.demo-cloud.test/authorize');
    expect(Object.fromEntries(a.url.searchParams)).toEqual({
      audience: 'home',
      response_type: 'code',
      client_id: 'edge-client',
      redirect_uri: 'http://edge.local:8123/auth/external/callback',
      state: a.state,
      scope: 'devices',
    });
    expect(a.state).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(a.state).not.toBe(b.state);
  });

  it('exchanges the code at the token URL and stores the tokens in the entry', async () => {
    const { flowId, state } = await start();
    const done = await advance(flowId, { code: 'good-code', state });
    expect(done.body).toEqual({
      type: 'create_entry',
      flowId,
      handler: 'oauth_demo_cloud',
      stepId: 'done',
      title: 'OAuth Demo Cloud',
      result: { config_entry_id: 1 },
    });
    expect(requests).toEqual([
      {
        method: 'POST',
        contentType: 'application/x-www-form-urlencoded',
        form: {
          grant_type: 'authorization_code',
          code: 'good-code',
          redirect_uri: 'http://edge.local:8123/auth/external/callback',
          client_id: 'edge-client',
          client_secret: 'edge-secret',
        },
      },
    ]);
    expect(store.get(1)?.data).toEqual({
      auth_implementation: 'oauth_demo_cloud',
      token: {
        access_token: 'at-1',
        refresh_token: 'rt-1',
        token_type: 'bearer',
        expires_in: 3600,
        expires_at: clock / 1000 + 3600,
        scope: 'devices',
      },
    });
    const list = await server.json('GET', '/v1/config_entries');
    expect(list.body).toMatchObject([{ id: 1, domain: 'oauth_demo_cloud', state: 'loaded' }]);
    expect(JSON.stringify(list.body)).not.toContain('at-1');
  });

  it('aborts on a wrong state without calling the token endpoint', async () => {
    const { flowId, state } = await start();
    const wrong = state.slice(0, -1) + (state.endsWith('A') ? 'B' : 'A');
    expect((await advance(flowId, { code: 'good-code', state: wrong })).body).toEqual({
      type: 'abort',
      flowId,
      handler: 'oauth_demo_cloud',
      reason: 'invalid_state',
    });
    expect(requests).toEqual([]);
    // The flow is gone: the right state cannot be replayed afterwards.
    expect((await advance(flowId, { code: 'good-code', state })).status).toBe(404);
    expect(store.list()).toEqual([]);
  });

  it('asks again when state or code is missing', async () => {
    const { flowId, state } = await start();
    const missingState = (await advance(flowId, { code: 'good-code' })).body;
    expect(missingState).toMatchObject({ type: 'form', stepId: 'auth', errors: { state: 'required' } });
    // The re-asked form still tells the app where to send the user.
    expect(new URL(missingState.description_placeholders.authorize_url).searchParams.get('state')).toBe(state);
    expect((await advance(flowId, { state })).body).toMatchObject({
      type: 'form',
      stepId: 'auth',
      errors: { code: 'required' },
    });
    expect((await advance(flowId, { state, error: 'access_denied' })).body).toMatchObject({
      type: 'abort',
      reason: 'user_rejected_authorize',
    });
    expect(requests).toEqual([]);
  });

  it('aborts with oauth_error when the token endpoint refuses the code', async () => {
    const { flowId, state } = await start();
    expect((await advance(flowId, { code: 'stale-code', state })).body).toEqual({
      type: 'abort',
      flowId,
      handler: 'oauth_demo_cloud',
      reason: 'oauth_error',
    });
    expect(requests).toHaveLength(1);
    expect(store.list()).toEqual([]);
  });

  it('aborts with oauth_error on a 200 without access_token or with a non-bearer token', async () => {
    answer = (_r, res) => sendJson(res, 200, { token_type: 'bearer' });
    let f = await start();
    expect((await advance(f.flowId, { code: 'good-code', state: f.state })).body.reason).toBe('oauth_error');
    answer = (_r, res) => sendJson(res, 200, { access_token: 'x', token_type: 'mac' });
    f = await start();
    expect((await advance(f.flowId, { code: 'good-code', state: f.state })).body.reason).toBe('oauth_error');
    answer = (_r, res) => {
      res.writeHead(500);
      res.end('<html>oops</html>');
    };
    f = await start();
    expect((await advance(f.flowId, { code: 'good-code', state: f.state })).body.reason).toBe('oauth_error');
    expect(store.list()).toEqual([]);
  });

  it('aborts with oauth_timeout when the token endpoint hangs', async () => {
    answer = (_r, res) => {
      setTimeout(() => sendJson(res, 200, { access_token: 'late', token_type: 'bearer' }), 1500);
    };
    const { flowId, state } = await start();
    const t0 = Date.now();
    expect((await advance(flowId, { code: 'good-code', state })).body.reason).toBe('oauth_timeout');
    expect(Date.now() - t0).toBeLessThan(1200);
  });

  it('does not follow a redirect with the client secret', async () => {
    answer = (_r, res) => {
      res.writeHead(307, { location: 'http://127.0.0.1:1/steal' });
      res.end();
    };
    const { flowId, state } = await start();
    expect((await advance(flowId, { code: 'good-code', state })).body.reason).toBe('oauth_error');
    expect(requests).toHaveLength(1);
  });

  it('expires an abandoned flow', async () => {
    const { flowId, state } = await start();
    clock += 60_001;
    expect(await advance(flowId, { code: 'good-code', state })).toEqual({
      status: 404,
      body: { message: 'flow not found' },
    });
    expect(requests).toEqual([]);
  });

  const callback = (params: Record<string, string>, accept?: string) =>
    fetch(`${server.url}/v1/config_flow/oauth/callback?${new URLSearchParams(params)}`, {
      headers: accept ? { accept } : {},
      redirect: 'manual',
    });
  /** A browser's callback: 303 to the portal's return page naming the flow; the flow's result as the portal reads it. */
  const browserCallback = async (params: Record<string, string>, flowId: string) => {
    const res = await callback(params);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`/integrations/oauth?flow_id=${flowId}`);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(await res.text()).toBe('');
    const read = await server.json('GET', `/v1/config_flow/${flowId}`);
    expect(read.status).toBe(200);
    return read.body;
  };

  it("the redirect callback advances the flow named by its state and sends the browser to the portal's return page", async () => {
    const { flowId, state } = await start();
    expect(await browserCallback({ code: 'good-code', state }, flowId)).toEqual({
      type: 'create_entry',
      flowId,
      handler: 'oauth_demo_cloud',
      stepId: 'done',
      title: 'OAuth Demo Cloud',
      result: { config_entry_id: 1 },
    });
    expect(requests.map((r) => r.form)).toEqual([
      {
        grant_type: 'authorization_code',
        code: 'good-code',
        redirect_uri: 'http://edge.local:8123/auth/external/callback',
        client_id: 'edge-client',
        client_secret: 'edge-secret',
      },
    ]);
    expect(store.get(1)?.data.token).toMatchObject({ access_token: 'at-1', refresh_token: 'rt-1' });
    // The flow is finished: neither the app nor a replayed redirect can use it again.
    expect((await advance(flowId, { code: 'good-code', state })).status).toBe(404);
    const replay = await callback({ code: 'good-code', state });
    expect(replay.status).toBe(404);
    expect(await replay.json()).toEqual({ message: 'unknown or expired state' });
    expect(requests).toHaveLength(1);
  });

  it('the callback answers the flow result as JSON for Accept: application/json, and picks the flow by state', async () => {
    const a = await start();
    const b = await start();
    const res = await callback({ code: 'good-code', state: b.state }, 'application/json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({
      type: 'create_entry',
      flowId: b.flowId,
      handler: 'oauth_demo_cloud',
      stepId: 'done',
      title: 'OAuth Demo Cloud',
      result: { config_entry_id: 1 },
    });
    // The other flow is untouched and still waits for its own code.
    expect(component.flows.size).toBe(1);
    const other = await callback({ code: 'stale-code', state: a.state }, 'application/json');
    expect(await other.json()).toEqual({
      type: 'abort',
      flowId: a.flowId,
      handler: 'oauth_demo_cloud',
      reason: 'oauth_error',
    });
    expect(store.list().map((e) => e.id)).toEqual([1]);
  });

  it('the callback reports token errors, provider errors and a missing code', async () => {
    let f = await start();
    expect(await browserCallback({ code: 'stale-code', state: f.state }, f.flowId)).toEqual({
      type: 'abort',
      flowId: f.flowId,
      handler: 'oauth_demo_cloud',
      reason: 'oauth_error',
    });

    f = await start();
    const res = await callback(
      { error: 'access_denied', error_description: 'user said no', state: f.state },
      'application/json',
    );
    expect(await res.json()).toEqual({
      type: 'abort',
      flowId: f.flowId,
      handler: 'oauth_demo_cloud',
      reason: 'user_rejected_authorize',
    });

    f = await start();
    // still the OAuth step, with the field's error: what the portal shows again
    expect(await browserCallback({ state: f.state }, f.flowId)).toMatchObject({
      type: 'form',
      flowId: f.flowId,
      stepId: 'auth',
      errors: { code: 'required' },
      description_placeholders: { authorize_url: expect.any(String) },
    });
    // Still open: the right code completes it.
    expect((await advance(f.flowId, { code: 'good-code', state: f.state })).body).toMatchObject({
      type: 'create_entry',
    });
    expect(requests.map((r) => r.form.code)).toEqual(['stale-code', 'good-code']);
  });

  it('the callback answers 404 {message} for an unknown or expired state and 400 without one', async () => {
    const { state } = await start();
    const wrong = state.slice(0, -1) + (state.endsWith('A') ? 'B' : 'A');
    let res = await callback({ code: 'good-code', state: wrong });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ message: 'unknown or expired state' });
    res = await callback({ code: 'good-code' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toMatch(/state/);
    clock += 60_001;
    res = await callback({ code: 'good-code', state });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ message: 'unknown or expired state' });
    expect(requests).toEqual([]);
    expect(store.list()).toEqual([]);
  });
});
