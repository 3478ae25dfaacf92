import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EntityState } from '@smarthome/protocol';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { mirrorHub, rawEdge, serveHub } from '../testing/tunnel-hub.ts';
import { lampState, sampleSnapshot, twoEdges } from '../testing/fixtures.ts';
import type { StateChanged, TunnelHub } from './hub.ts';

// A change that carries its old state is announced to apps on arrival, before the mirror's commit
// (#19); its ack still waits for the commit, and the mirror's reads of the edge wait for it too.

let t: TestCloud;
let edgeA: number;
let edgeB: number;
let hub: TunnelHub;
let closeHub: () => Promise<void>;
let url: string;
/** while set, the mirror's delta writes wait for it (a slow commit) */
let gate: Promise<void> | null = null;
/** while set, the next delta write fails (the database away) */
let failNext = false;
const events: string[] = [];
const changes: StateChanged[] = [];
/** per delta write, whether the hub asked for the old states (not when its edge sent them) */
const oldStatesAsked: boolean[] = [];

beforeAll(async () => {
  t = await startTestCloud();
  ({ edgeA, edgeB } = await twoEdges(t));
  const mirror = t.cloud.services.mirror;
  hub = mirrorHub(
    mirror,
    { a: edgeA, b: edgeB },
    {
      applyDeltas: async (edgeId, lastSeq, deltas, oldStates) => {
        oldStatesAsked.push(oldStates);
        if (gate) await gate;
        if (failNext) {
          failNext = false;
          throw new Error('database away');
        }
        const out = await mirror.applyDeltas(edgeId, deltas, lastSeq, oldStates);
        events.push(`commit ${lastSeq}`);
        return out;
      },
      announce: (edgeId, settled) => mirror.announced.add(edgeId, settled),
    },
  );
  hub.on('state_changed', (e: StateChanged) => {
    changes.push(e);
    events.push(`state_changed ${e.new_state?.state}`);
  });
  hub.on('state_committed', (e: StateChanged) => events.push(`state_committed ${e.new_state?.state}`));
  hub.on('edge_event', (e: { event: { event_type: string } }) => events.push(`event ${e.event.event_type}`));
  ({ url, close: closeHub } = await serveHub(hub));
});
afterAll(async () => {
  await closeHub();
  await t.stop();
});

/** A raw edge end, welcomed and synced with a one-lamp snapshot at seq 0 (lamp 1 'off'). */
async function edge(token: string) {
  const { ws, acks } = await rawEdge(url, token, (msg) => {
    if (msg.type === 'ack') events.push(`ack ${msg.seq}`);
  });
  const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
  const send = (msg: unknown) => ws.send(JSON.stringify(msg));
  send({ type: 'snapshot', seq: 0, data: sampleSnapshot({ devices: 1 }) });
  await expect.poll(() => acks).toContain(0);
  return { ws, acks, send, closed };
}

const lamp = (state: string): EntityState => lampState(state, { brightness: state === 'on' ? 200 : 0 });
const change = (seq: number, state: string, old: string | null | undefined) => ({
  type: 'delta',
  seq,
  delta: {
    kind: 'state',
    state: lamp(state),
    ...(old === undefined ? {} : { old_state: old === null ? null : lamp(old) }),
  },
});

function gated(): () => void {
  let open!: () => void;
  gate = new Promise<void>((r) => (open = r));
  return () => {
    gate = null;
    open();
  };
}

describe('a change announced before its commit', () => {
  it("goes to apps on arrival with the edge's old state; ack, state_committed and the mirror's reads wait for the commit", async () => {
    const mirror = t.cloud.services.mirror;
    const a = await edge('a');
    events.length = 0;
    changes.length = 0;
    oldStatesAsked.length = 0;
    const release = gated();
    a.send(change(1, 'on', 'off'));
    await expect.poll(() => events).toEqual(['state_changed on']);
    // the edge sent the old state: the mirror is not asked to read it
    expect(oldStatesAsked).toEqual([false]);
    expect(changes[0]).toEqual({
      edgeId: edgeA,
      entity_id: 'light.lamp_1',
      old_state: lamp('off'),
      new_state: lamp('on'),
    });
    // a read of the edge started now sees the announced state, not the one before: it waits for the commit
    let read: EntityState | null | undefined;
    void mirror.state([edgeA], 'light.lamp_1').then((s) => (read = s));
    let listed: (string | null)[] | undefined;
    void mirror.states([edgeA]).then((s) => (listed = s.map((x) => x.state)));
    // another edge's reads do not wait
    expect(await mirror.states([edgeB])).toEqual([]);
    await new Promise((r) => setTimeout(r, 50));
    expect(read).toBeUndefined();
    expect(listed).toBeUndefined();
    expect(a.acks).toEqual([0]);
    release();
    await expect.poll(() => a.acks).toEqual([0, 1]);
    // (the ack is sent right after the commit; the edge's end records it when it arrives)
    expect(events.filter((e) => !e.startsWith('ack'))).toEqual(['state_changed on', 'commit 1', 'state_committed on']);
    await expect.poll(() => read?.state).toBe('on');
    await expect.poll(() => listed).toEqual(['on']);
    expect(mirror.announced.size).toBe(0);
    a.ws.close();
    await a.closed;
  });

  it("an older edge's change (no old_state) is announced after the commit, with the mirror's old state", async () => {
    const a = await edge('a');
    events.length = 0;
    changes.length = 0;
    oldStatesAsked.length = 0;
    const release = gated();
    a.send(change(1, 'on', undefined));
    await new Promise((r) => setTimeout(r, 50));
    expect(events).toEqual([]);
    expect(oldStatesAsked).toEqual([true]);
    release();
    await expect.poll(() => a.acks).toEqual([0, 1]);
    expect(events.filter((e) => !e.startsWith('ack'))).toEqual(['commit 1', 'state_changed on', 'state_committed on']);
    expect(changes[0]!.old_state).toMatchObject({ state: 'off' });
    a.ws.close();
    await a.closed;
  });

  it("keeps the edge's order: a change behind a message whose work is still queued is announced after that work", async () => {
    const a = await edge('a');
    events.length = 0;
    const release = gated();
    a.send(change(1, 'on', 'off'));
    a.send(change(2, 'off', undefined));
    a.send({ type: 'event', event_type: 'custom', data: {} });
    a.send(change(3, 'on', 'off'));
    await expect.poll(() => events).toEqual(['state_changed on']);
    await new Promise((r) => setTimeout(r, 50));
    expect(events).toEqual(['state_changed on']);
    release();
    await expect.poll(() => a.acks).toEqual([0, 2, 3]);
    await expect
      .poll(() => events.filter((e) => !e.startsWith('commit') && !e.startsWith('ack')))
      .toEqual([
        'state_changed on',
        'state_committed on',
        'state_changed off',
        'state_committed off',
        'event custom',
        'state_changed on',
        'state_committed on',
      ]);
    // with nothing queued any more, the next change goes out on arrival again
    events.length = 0;
    const again = gated();
    a.send(change(4, 'off', 'on'));
    await expect.poll(() => events).toEqual(['state_changed off']);
    again();
    await expect.poll(() => a.acks).toContain(4);
    a.ws.close();
    await a.closed;
  });

  it('a write that fails after its change was announced: no ack, the tunnel closes, the reads stop waiting', async () => {
    const mirror = t.cloud.services.mirror;
    const a = await edge('a');
    events.length = 0;
    const release = gated();
    failNext = true;
    a.send(change(1, 'on', 'off'));
    await expect.poll(() => events).toEqual(['state_changed on']);
    const read = mirror.state([edgeA], 'light.lamp_1');
    release();
    expect(await a.closed).toBe(1011);
    // the edge resends it after reconnecting; until then the mirror holds the state before
    expect((await read)?.state).toBe('off');
    expect(a.acks).toEqual([0]);
    expect(events).toEqual(['state_changed on']);
    expect(mirror.announced.size).toBe(0);
  });
});
