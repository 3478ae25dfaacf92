import { describe, expect, it } from 'vitest';
import type { EntityState } from '@smarthome/protocol';
import type { HaRelayBody } from '@smarthome/protocol/ha/index';
import { HaCommandError } from '@smarthome/protocol/server/ha/index';
import type { Scope } from './relay.ts';
import { CloudTriggerSubscriptions } from './trigger-subscriptions.ts';

/**
 * The cloud's subscribe_trigger bookkeeping with the edges' answers scripted (the real relay,
 * tunnel and edges are driven in tools/src/e2e/ha-cloud-triggers.test.ts): which edges a trigger
 * goes to, what an edge's refusal or absence does, and which fires reach the caller.
 */
type P = { userId: string };
const p: P = { userId: 'u1' };
const state = (entity_id: string, edge_id: number) => ({ entity_id, edge_id }) as EntityState;

function world(answers: Record<number, () => Promise<unknown>> = {}) {
  const calls: { edgeId: number; body: HaRelayBody }[] = [];
  // edges 1 and 2 whole; light.shared on edge 3 through a share only
  const scope: Scope = {
    edges: [1, 2].map((edgeId) => ({ edgeId, orgId: null, ownerId: 'u1', role: 'owner' as const })),
    shared: [{ edgeId: 3, entityId: 'light.shared', canView: true, canControl: false, canEdit: false }],
  };
  const subs = new CloudTriggerSubscriptions<P>({
    call: async (_p, edgeId, body) => {
      calls.push({ edgeId, body });
      return (answers[edgeId] ?? (async () => null))();
    },
    scope: async () => scope,
    visibleStates: async () => [state('light.a', 1), state('light.shared', 3)],
    log: { warn: () => {} },
  });
  return { subs, calls };
}
const ops = (calls: { edgeId: number; body: HaRelayBody }[]) => calls.map((c) => `${c.body.op}@${c.edgeId}`);
const offline = (edgeId: number) => async () => {
  throw new HaCommandError('home_assistant_error', `Edge ${edgeId} is offline.`);
};

describe('CloudTriggerSubscriptions', () => {
  it('an entity trigger goes to its edge, one naming none to every whole edge (not to share-only ones)', async () => {
    const { subs, calls } = world();
    const end = await subs.subscribe(p, { platform: 'state', entity_id: 'light.shared' }, {}, () => {});
    await subs.subscribe(p, [{ platform: 'time_pattern', seconds: '/5' }], {}, () => {});
    expect(ops(calls)).toEqual(['subscribe_trigger@3', 'subscribe_trigger@1', 'subscribe_trigger@2']);
    end();
    expect(ops(calls).at(-1)).toBe('unsubscribe_trigger@3');
    // a hello re-arms the subscriptions of that edge only; an ended one is not made again
    calls.length = 0;
    await subs.edgeOnline(3);
    await subs.edgeOnline(1);
    expect(ops(calls)).toEqual(['subscribe_trigger@1']);
    await expect(subs.subscribe(p, { platform: 'state', entity_id: 'light.nope' }, {}, () => {})).rejects.toEqual(
      new HaCommandError('not_found', 'Entity light.nope not found.'),
    );
  });

  it('an edge refusing the trigger disarms the others; all edges offline refuses; some offline is fine', async () => {
    const invalid = world({
      2: async () => {
        throw new HaCommandError('invalid_format', 'trigger[0]: bad');
      },
    });
    await expect(invalid.subs.subscribe(p, { platform: 'event' }, {}, () => {})).rejects.toMatchObject({
      code: 'invalid_format',
    });
    expect(ops(invalid.calls).slice(2).sort()).toEqual(['unsubscribe_trigger@1', 'unsubscribe_trigger@2']);
    expect(invalid.subs.size).toBe(0);
    const down = world({ 1: offline(1), 2: offline(2) });
    await expect(down.subs.subscribe(p, { platform: 'event' }, {}, () => {})).rejects.toMatchObject({
      message: 'Edge 1 is offline.',
    });
    const half = world({ 2: offline(2) });
    await half.subs.subscribe(p, { platform: 'event' }, {}, () => {});
    expect(half.subs.size).toBe(1);
    // edge 2 says hello: armed there again under the same id
    half.calls.length = 0;
    await half.subs.edgeOnline(2);
    expect(ops(half.calls)).toEqual(['subscribe_trigger@2']);
  });

  it('an edge from before trigger relays (its body check answers 400) is left out', async () => {
    const old = async () => {
      throw new HaCommandError('service_validation_error', 'op: invalid');
    };
    const { subs, calls } = world({ 2: old });
    await subs.subscribe(p, { platform: 'event' }, {}, () => {});
    calls.length = 0;
    await subs.edgeOnline(2);
    expect(calls).toEqual([]);
    await expect(world({ 1: old, 2: old }).subs.subscribe(p, { platform: 'event' }, {}, () => {})).rejects.toEqual(
      new HaCommandError('home_assistant_error', 'Edge 1 cannot arm triggers: update it.'),
    );
  });

  it('fires reach the caller only from its edges, and from a share-only edge only about the shared entity', async () => {
    const { subs, calls } = world();
    const got: unknown[] = [];
    await subs.subscribe(p, [{ platform: 'state', entity_id: 'light.shared' }, { platform: 'event' }], {}, (e) =>
      got.push(e.variables.trigger),
    );
    const id = (calls[0].body as { subscription: string }).subscription;
    const fire = (edgeId: number, trigger: Record<string, unknown>) =>
      subs.fired({ edgeId, subscription: id, variables: { trigger }, context: null });
    await fire(3, { platform: 'state', entity_id: 'light.shared' });
    await fire(3, { platform: 'state', entity_id: 'light.other' });
    await fire(3, { platform: 'event' });
    await fire(1, { platform: 'event' });
    await fire(9, { platform: 'event' });
    await subs.fired({ edgeId: 1, subscription: 'unknown', variables: { trigger: {} }, context: null });
    expect(got).toEqual([{ platform: 'state', entity_id: 'light.shared' }, { platform: 'event' }]);
  });
});
