import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigFlowComponent } from './component.ts';
import { InMemoryConfigEntryStore, InMemoryDeviceRegistry, InMemoryStates } from './memory-ports.ts';
import { checkStepInput } from './schema.ts';
import type { TestServer } from '../testing/server.ts';
import { callbackIntegration, serveConfigFlows, type ConfigFlowHarness } from '../testing/config-flow.ts';
import type { Integration, StepResult } from './types.ts';

/** A two-step test integration: "user" (name, count) → "confirm" (ok) → entry. */
const testIntegration: Integration = {
  domain: 'test_two_step',
  name: 'Two steps',
  createFlow: () => {
    let name = '';
    return {
      firstStep: 'user',
      step(stepId, input): StepResult {
        if (stepId === 'user') {
          const form: StepResult = {
            type: 'form',
            stepId: 'user',
            data_schema: [
              { name: 'name', type: 'string', required: true },
              { name: 'count', type: 'integer', required: false, default: 3 },
              { name: 'mode', type: 'select', required: false, options: ['a', 'b'] },
            ],
          };
          if (!input) return form;
          if (input.name === 'forbidden') return { type: 'abort', reason: 'not_allowed' };
          if (input.name === 'boom') throw new Error('integration bug');
          name = String(input.name);
          return { type: 'form', stepId: 'confirm', data_schema: [{ name: 'ok', type: 'boolean', required: true }] };
        }
        if (!input?.ok) return { type: 'abort', reason: 'not_confirmed' };
        return { type: 'create_entry', title: name, data: { name, secret: 's3cret' } };
      },
    };
  },
};

describe('checkStepInput', () => {
  const schema = [
    { name: 'host', type: 'string' as const, required: true },
    { name: 'port', type: 'integer' as const, required: true, default: 1883 },
    { name: 'ratio', type: 'float' as const },
    { name: 'on', type: 'boolean' as const },
    { name: 'url', type: 'url' as const },
  ];
  it('coerces form strings, applies defaults and drops unknown fields', () => {
    expect(checkStepInput(schema, { host: ' h ', ratio: '0.5', on: 'true', url: 'http://x/y', extra: 1 })).toEqual({
      ok: true,
      data: { host: 'h', port: 1883, ratio: 0.5, on: true, url: 'http://x/y' },
    });
    expect(checkStepInput(schema, { host: 'h', port: '8883' })).toEqual({ ok: true, data: { host: 'h', port: 8883 } });
  });
  it('reports one error per bad field', () => {
    expect(checkStepInput(schema, { port: '1.5', ratio: 'x', on: 'maybe', url: 'ftp://x' })).toEqual({
      ok: false,
      errors: {
        host: 'required',
        port: 'invalid_integer',
        ratio: 'invalid_number',
        on: 'invalid_boolean',
        url: 'invalid_url',
      },
    });
    expect(checkStepInput(schema, { host: 42 })).toEqual({ ok: false, errors: { host: 'invalid_string' } });
  });
  it('keeps numbers within a field’s min and max (bounds included)', () => {
    const ranged = [
      { name: 'port', type: 'integer' as const, min: 1, max: 65535 },
      { name: 'ratio', type: 'float' as const, min: 0, max: 1 },
    ];
    expect(checkStepInput(ranged, { port: '65535', ratio: '0' })).toEqual({
      ok: true,
      data: { port: 65535, ratio: 0 },
    });
    expect(checkStepInput(ranged, { port: '0', ratio: '1.5' })).toEqual({
      ok: false,
      errors: { port: 'out_of_range', ratio: 'out_of_range' },
    });
  });
});

describe('config flow engine over HTTP', () => {
  let h: ConfigFlowHarness<{ user: string }>;
  let server: TestServer;
  let component: ConfigFlowComponent;
  let store: InMemoryConfigEntryStore;
  let clock: number;
  let principal: { user: string };

  beforeEach(async () => {
    clock = 1_000_000;
    principal = { user: 'alice' };
    h = await serveConfigFlows({
      integrations: () => [testIntegration],
      flowTtlMs: 60_000,
      flowSweepIntervalMs: 10,
      now: () => clock,
      principal,
      ownerOf: (p) => p.user,
    });
    ({ server, component, store } = h);
  });
  afterEach(() => h.close());

  it('lists handlers', async () => {
    expect(await server.json('GET', '/v1/config_flow/handlers')).toEqual({
      status: 200,
      body: [{ domain: 'test_two_step', name: 'Two steps' }],
    });
  });

  it('runs a flow through two steps to a config entry', async () => {
    const start = await server.json('POST', '/v1/config_flow', { handler: 'test_two_step' });
    expect(start.status).toBe(200);
    expect(start.body).toMatchObject({ type: 'form', handler: 'test_two_step', stepId: 'user', errors: {} });
    expect(start.body.data_schema.map((f: { name: string }) => f.name)).toEqual(['name', 'count', 'mode']);
    expect(start.body.flowId).toMatch(/^[0-9a-f]{32}$/);

    const bad = await server.json('POST', `/v1/config_flow/${start.body.flowId}/advance`, { count: 'many', mode: 'c' });
    expect(bad.status).toBe(200);
    expect(bad.body).toMatchObject({
      type: 'form',
      stepId: 'user',
      errors: { name: 'required', count: 'invalid_integer', mode: 'invalid_option' },
    });

    const next = await server.json('POST', `/v1/config_flow/${start.body.flowId}/advance`, { name: 'Kitchen' });
    expect(next.body).toMatchObject({ type: 'form', stepId: 'confirm', errors: {} });

    const done = await server.json('POST', `/v1/config_flow/${start.body.flowId}/advance`, { ok: true });
    expect(done.status).toBe(200);
    expect(done.body).toEqual({
      type: 'create_entry',
      flowId: start.body.flowId,
      handler: 'test_two_step',
      stepId: 'done',
      title: 'Kitchen',
      result: { config_entry_id: 1 },
    });
    expect(store.get(1)?.data).toEqual({ name: 'Kitchen', secret: 's3cret' });

    const entries = await server.json('GET', '/v1/config_entries');
    expect(entries.status).toBe(200);
    expect(entries.body).toEqual([
      {
        id: 1,
        domain: 'test_two_step',
        title: 'Kitchen',
        source: 'user',
        state: 'loaded',
        created_at: expect.any(String),
        edge_id: null,
      },
    ]);
    expect(JSON.stringify(entries.body)).not.toContain('s3cret');

    // A finished flow is gone.
    expect(await server.json('POST', `/v1/config_flow/${start.body.flowId}/advance`, { ok: true })).toEqual({
      status: 404,
      body: { message: 'flow not found' },
    });
  });

  it('answers abort from a step and forgets the flow', async () => {
    const start = await server.json('POST', '/v1/config_flow', { handler: 'test_two_step' });
    const abort = await server.json('POST', `/v1/config_flow/${start.body.flowId}/advance`, { name: 'forbidden' });
    expect(abort).toEqual({
      status: 200,
      body: { type: 'abort', flowId: start.body.flowId, handler: 'test_two_step', reason: 'not_allowed' },
    });
    expect((await server.json('DELETE', `/v1/config_flow/${start.body.flowId}`)).status).toBe(404);
  });

  it('turns an integration exception into abort "unknown"', async () => {
    const start = await server.json('POST', '/v1/config_flow', { handler: 'test_two_step' });
    const res = await server.json('POST', `/v1/config_flow/${start.body.flowId}/advance`, { name: 'boom' });
    expect(res.body).toMatchObject({ type: 'abort', reason: 'unknown' });
  });

  it('deletes a flow with 200 {message}; then it is 404', async () => {
    const start = await server.json('POST', '/v1/config_flow', { handler: 'test_two_step' });
    expect(await server.json('DELETE', `/v1/config_flow/${start.body.flowId}`)).toEqual({
      status: 200,
      body: { message: 'flow aborted' },
    });
    expect(await server.json('POST', `/v1/config_flow/${start.body.flowId}/advance`, { name: 'x' })).toEqual({
      status: 404,
      body: { message: 'flow not found' },
    });
    expect(component.flows.size).toBe(0);
  });

  it('answers 404 for an unknown handler or flow and 400 for a malformed start body', async () => {
    expect(await server.json('POST', '/v1/config_flow', { handler: 'nope' })).toEqual({
      status: 404,
      body: { message: 'unknown handler' },
    });
    expect(await server.json('POST', '/v1/config_flow/0123456789abcdef0123456789abcdef/advance', {})).toEqual({
      status: 404,
      body: { message: 'flow not found' },
    });
    expect(await server.json('DELETE', '/v1/config_flow/..%2F..')).toEqual({
      status: 404,
      body: { message: 'not found' },
    });
    const bad = await server.json('POST', '/v1/config_flow', { handler: 5 });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/handler/);
  });

  it('expires an abandoned flow after the TTL; activity extends it', async () => {
    const start = await server.json('POST', '/v1/config_flow', { handler: 'test_two_step' });
    const id = start.body.flowId;
    clock += 50_000;
    expect((await server.json('POST', `/v1/config_flow/${id}/advance`, {})).body.errors).toEqual({ name: 'required' });
    clock += 50_000; // 100 s after start but only 50 s after the last step
    expect((await server.json('POST', `/v1/config_flow/${id}/advance`, { name: 'A' })).body.stepId).toBe('confirm');
    clock += 60_001;
    // The sweeper (every 10 ms here) removes it even if nobody asks.
    await new Promise((r) => setTimeout(r, 40));
    expect(component.flows.size).toBe(0);
    expect(await server.json('POST', `/v1/config_flow/${id}/advance`, { ok: true })).toEqual({
      status: 404,
      body: { message: 'flow not found' },
    });
    expect(store.list()).toEqual([]);
  });

  it("hides another principal's flow", async () => {
    const start = await server.json('POST', '/v1/config_flow', { handler: 'test_two_step' });
    principal.user = 'mallory';
    expect((await server.json('POST', `/v1/config_flow/${start.body.flowId}/advance`, { name: 'x' })).status).toBe(404);
    expect((await server.json('DELETE', `/v1/config_flow/${start.body.flowId}`)).status).toBe(404);
    principal.user = 'alice';
    expect((await server.json('POST', `/v1/config_flow/${start.body.flowId}/advance`, { name: 'x' })).body.stepId).toBe(
      'confirm',
    );
  });

  it('GET a flow: its step as last answered (errors too), then how it ended, for the TTL; only to its owner', async () => {
    const id = (await server.json('POST', '/v1/config_flow', { handler: 'test_two_step' })).body.flowId as string;
    const read = () => server.json('GET', `/v1/config_flow/${id}`);
    expect((await read()).body).toMatchObject({ type: 'form', flowId: id, stepId: 'user', errors: {} });
    const invalid = await server.json('POST', `/v1/config_flow/${id}/advance`, {});
    expect(await read()).toEqual({ status: 200, body: invalid.body });
    await server.json('POST', `/v1/config_flow/${id}/advance`, { name: 'Hall' });
    const done = await server.json('POST', `/v1/config_flow/${id}/advance`, { ok: true });
    expect(done.body).toMatchObject({ type: 'create_entry', title: 'Hall' });
    expect(await read()).toEqual({ status: 200, body: done.body });
    principal.user = 'mallory';
    expect(await read()).toEqual({ status: 404, body: { message: 'flow not found' } });
    principal.user = 'alice';
    clock += 60_001;
    expect(await read()).toEqual({ status: 404, body: { message: 'flow not found' } });
    expect((await server.json('GET', '/v1/config_flow/unknown')).status).toBe(404);
    // the static route still wins over {flowId}
    expect((await server.json('GET', '/v1/config_flow/handlers')).body).toEqual([
      { domain: 'test_two_step', name: 'Two steps' },
    ]);
  });

  it('advances a flow by its callback_state (any caller, state never on the wire); other steps have none', async () => {
    const c = new ConfigFlowComponent({
      entries: new InMemoryConfigEntryStore(),
      devices: new InMemoryDeviceRegistry(),
      states: new InMemoryStates(),
      integrations: [callbackIntegration('S'.repeat(32)), testIntegration],
    });
    await c.start();
    try {
      const start = await c.flows.startFlow('test_callback', 'alice');
      expect(JSON.stringify(start)).not.toContain('S'.repeat(32));
      await c.flows.startFlow('test_two_step', 'alice');
      await expect(c.flows.advanceByCallbackState('S'.repeat(31), { code: 'x' })).rejects.toMatchObject({
        status: 404,
        message: 'unknown or expired state',
      });
      await expect(c.flows.advanceByCallbackState('', { code: 'x' })).rejects.toMatchObject({ status: 404 });
      expect(await c.flows.advanceByCallbackState('S'.repeat(32), { code: 'x', state: 'S'.repeat(32) })).toEqual({
        type: 'create_entry',
        flowId: start.flowId,
        handler: 'test_callback',
        stepId: 'done',
        title: 'code x',
        result: { config_entry_id: 1 },
      });
      await expect(c.flows.advanceByCallbackState('S'.repeat(32), { code: 'x' })).rejects.toMatchObject({
        status: 404,
      });
      expect(c.flows.size).toBe(1);
    } finally {
      await c.stop();
    }
  });

  it('serializes concurrent steps of one flow: exactly one entry', async () => {
    const start = await server.json('POST', '/v1/config_flow', { handler: 'test_two_step' });
    await server.json('POST', `/v1/config_flow/${start.body.flowId}/advance`, { name: 'Once' });
    const results = await Promise.all(
      [1, 2, 3].map(() => server.json('POST', `/v1/config_flow/${start.body.flowId}/advance`, { ok: true })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 404, 404]);
    expect(store.list()).toHaveLength(1);
  });

  it('deletes config entries; unknown or malformed id is 404', async () => {
    const start = await server.json('POST', '/v1/config_flow', { handler: 'test_two_step' });
    await server.json('POST', `/v1/config_flow/${start.body.flowId}/advance`, { name: 'X' });
    const done = await server.json('POST', `/v1/config_flow/${start.body.flowId}/advance`, { ok: true });
    const id = done.body.result.config_entry_id;
    expect(await server.json('DELETE', `/v1/config_entries/${id}`)).toEqual({
      status: 200,
      body: { message: 'config entry removed' },
    });
    expect(await server.json('GET', '/v1/config_entries')).toEqual({ status: 200, body: [] });
    expect(await server.json('DELETE', `/v1/config_entries/${id}`)).toEqual({
      status: 404,
      body: { message: 'config entry not found' },
    });
    expect((await server.json('DELETE', '/v1/config_entries/abc')).status).toBe(404);
  });

  it('refuses more flows than maxFlows with 409', async () => {
    const small = new ConfigFlowComponent({
      entries: new InMemoryConfigEntryStore(),
      devices: new InMemoryDeviceRegistry(),
      states: new InMemoryStates(),
      integrations: [testIntegration],
      maxFlows: 2,
    });
    await small.flows.startFlow('test_two_step');
    await small.flows.startFlow('test_two_step');
    await expect(small.flows.startFlow('test_two_step')).rejects.toMatchObject({ status: 409 });
    await small.stop();
  });

  it('on start sets up stored entries: failures become setup_error, foreign domains are left alone', async () => {
    const entries = new InMemoryConfigEntryStore();
    const foreign = entries.create({ domain: 'core_thing', title: 'Core', data: {}, source: 'system' });
    entries.update(foreign.id, { state: 'loaded' });
    const broken = entries.create({ domain: 'broken', title: 'Broken', data: {}, source: 'user' });
    const c = new ConfigFlowComponent({
      entries,
      devices: new InMemoryDeviceRegistry(),
      states: new InMemoryStates(),
      integrations: [
        {
          domain: 'broken',
          name: 'Broken',
          createFlow: testIntegration.createFlow,
          setupEntry: () => {
            throw new Error('no');
          },
        },
      ],
    });
    await c.start();
    expect(entries.get(foreign.id)?.state).toBe('loaded');
    expect(entries.get(broken.id)?.state).toBe('setup_error');
    await c.stop();
  });
});
