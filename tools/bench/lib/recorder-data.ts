import WebSocket, { WebSocketServer } from 'ws';
import { EdgeDatabase } from '@smarthome/edge/db/database';

/** The recorder bench's queries half: its seeded day of history and its clients (recorder.ts). */

const STEP_S = 300;
const ATTRIBUTE_EVERY = 72; // rows: every 6 h

export function seed(dir: string, entities: number, start: number): number {
  const database = new EdgeDatabase(dir);
  database.open();
  const sqlite = database.sqlite;
  const insertEntity = sqlite.prepare('INSERT INTO recorder_entities (metadata_id, entity_id) VALUES (?, ?)');
  // as the recorder stores them: a set carried by the first row that has it (attributes_id = -state_id)
  const insertState = sqlite.prepare(
    'INSERT INTO recorder_states (state_id, metadata_id, state, attributes_id, last_updated, last_changed, shared) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const insertEvent = sqlite.prepare('INSERT INTO recorder_events (event_type, data, time_fired) VALUES (?, ?, ?)');
  const perEntity = 86_400 / STEP_S;
  let rows = 0;
  sqlite.transaction(() => {
    const texts: string[][] = [];
    const attributeIds: number[][] = [];
    for (let e = 1; e <= entities; e++) {
      insertEntity.run(e, entityId(e));
      const sensor = e % 2 === 0;
      texts[e] = [];
      attributeIds[e] = [];
      for (let k = 0; k * ATTRIBUTE_EVERY < perEntity; k++) {
        texts[e][k] = JSON.stringify(
          sensor
            ? {
                unit_of_measurement: 'W',
                device_class: 'power',
                state_class: 'measurement',
                battery: 100 - k,
                friendly_name: `Power ${e}`,
              }
            : { device_class: 'motion', battery: 100 - k, friendly_name: `Motion ${e}` },
        );
      }
    }
    const insert = (e: number, state: string, k: number, t: number, changed: number | null) => {
      const id = ++rows;
      const carried = attributeIds[e][k];
      if (carried !== undefined) insertState.run(id, e, state, carried, t, changed, null);
      else {
        attributeIds[e][k] = -id;
        insertState.run(id, e, state, -id, t, changed, texts[e][k]);
      }
    };
    // time order, as the recorder writes them; entities spread over the step
    for (let i = 0; i < perEntity; i++) {
      for (let e = 1; e <= entities; e++) {
        const t = start + i * STEP_S + (e * STEP_S) / entities;
        const state = e % 2 === 0 ? String((i * 7 + e) % 1000) : i % 2 ? 'on' : 'off';
        insert(e, state, Math.floor(i / ATTRIBUTE_EVERY), t, null);
        // the attribute update an entity sends at each new set: same state, last_changed kept
        if (i % ATTRIBUTE_EVERY === ATTRIBUTE_EVERY - 1 && i + 1 < perEntity)
          insert(e, state, (i + 1) / ATTRIBUTE_EVERY, t + 1, t);
      }
    }
    for (let m = 0; m < 1440; m++)
      insertEvent.run(
        m % 60 === 0 ? 'logbook_entry' : 'call_service',
        JSON.stringify(
          m % 60 === 0
            ? { name: 'Kitchen', message: 'was cleaned', entity_id: entityId(1) }
            : { domain: 'light', service: 'turn_on', service_data: { entity_id: 'light.hall' } },
        ),
        start + m * 60,
      );
    // a purge at start would walk 1,000 entities while we measure
    sqlite.prepare("INSERT INTO recorder_meta (key, value) VALUES ('last_purge', ?)").run(String(Date.now()));
  })();
  database.close();
  return rows;
}

export const entityId = (e: number) => (e % 2 === 0 ? `sensor.power_${e}` : `binary_sensor.motion_${e}`);

/** A minimal HA WebSocket client: one request at a time, answer taken as raw text. */
export async function haSocket(url: string, token: string) {
  const socket = new WebSocket(url, { maxPayload: 2 ** 31 });
  // a message may come before anyone waits for it (auth_required right after open)
  const waiting: ((text: string) => void)[] = [];
  const arrived: string[] = [];
  socket.on('message', (data: Buffer) => {
    const text = data.toString();
    const waiter = waiting.shift();
    if (waiter) waiter(text);
    else arrived.push(text);
  });
  const next = () =>
    new Promise<string>((resolve) => {
      const text = arrived.shift();
      if (text !== undefined) resolve(text);
      else waiting.push(resolve);
    });
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  await next(); // auth_required
  const ok = next();
  socket.send(JSON.stringify({ type: 'auth', access_token: token }));
  if (!(await ok).includes('auth_ok')) throw new Error('auth failed');
  let id = 0;
  return {
    async request(msg: Record<string, unknown>): Promise<string> {
      const answer = next();
      socket.send(JSON.stringify({ id: ++id, ...msg }));
      return answer;
    },
    close: () => socket.close(),
  };
}

/**
 * The transport's floor: a plain ws server on loopback that answers any message with a
 * prebuilt text (no query, no serialising), read by the same kind of client as the edge's.
 */
export async function floorSocket(answer: () => string) {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise((resolve) => server.once('listening', resolve));
  server.on('connection', (socket) => socket.on('message', () => socket.send(answer())));
  const socket = new WebSocket(`ws://127.0.0.1:${(server.address() as { port: number }).port}`, {
    maxPayload: 2 ** 31,
  });
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  return {
    request: () =>
      new Promise<string>((resolve) => {
        socket.once('message', (data: Buffer) => resolve(data.toString()));
        socket.send('{}');
      }),
    close: async () => {
      socket.close();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
