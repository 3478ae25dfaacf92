import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { callbackIntegration, serveConfigFlows, type ConfigFlowHarness } from '../testing/config-flow.ts';

/** GET /v1/config_flow/oauth/callback over loopback: where a browser and a JSON caller are sent. */
const STATE = 'S'.repeat(32);
const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

describe('the OAuth callback route', () => {
  let h: ConfigFlowHarness<object>;
  beforeEach(async () => {
    h = await serveConfigFlows({ integrations: () => [callbackIntegration(STATE)] });
  });
  afterEach(() => h.close());

  const callback = (state: string, accept?: string) =>
    fetch(`${h.server.url}/v1/config_flow/oauth/callback?code=c&state=${state}`, {
      redirect: 'manual',
      headers: accept ? { accept } : {},
    });

  it('sends a browser with an unknown or used state to the portal with an error; JSON callers keep the 404', async () => {
    const unknown = await callback('nope', BROWSER);
    expect([unknown.status, unknown.headers.get('location'), unknown.headers.get('cache-control')]).toEqual([
      303,
      '/integrations/oauth?error=unknown_state',
      'no-store',
    ]);
    const json = await callback('nope', 'application/json');
    expect([json.status, await json.json()]).toEqual([404, { message: 'unknown or expired state' }]);
    // a client that says nothing (curl, a script) is no browser: the JSON 404
    const bare = await callback('nope');
    expect([bare.status, await bare.json()]).toEqual([404, { message: 'unknown or expired state' }]);
    // text/html next to application/json: JSON wins
    const both = await callback('nope', 'text/html, application/json');
    expect(both.status).toBe(404);

    // the real state: on to the flow; used once, the same link is an error page's case
    const start = await h.server.json('POST', '/v1/config_flow', { handler: 'test_callback' });
    const done = await callback(STATE, BROWSER);
    expect([done.status, done.headers.get('location')]).toEqual([
      303,
      `/integrations/oauth?flow_id=${start.body.flowId}`,
    ]);
    const again = await callback(STATE, BROWSER);
    expect([again.status, again.headers.get('location')]).toEqual([303, '/integrations/oauth?error=unknown_state']);
  });
});
