import { silentLogger } from '../server/log.ts';
import type { HaBackend } from '../server/ha/backend.ts';
import { HaSession } from '../server/ha/session.ts';

export type TestPrincipal = { user: string };
type P = TestPrincipal;
/** A backend with only the required methods, answering nothing (spread it and override what a test needs). */
export const bareHaBackend: HaBackend<P> = {
  authenticate: async (auth) => (auth.access_token === 'good' ? { user: 'u' } : null),
  getStates: async () => [],
  getConfig: async () => {
    throw new Error('unused');
  },
  getServices: async () => ({}),
  callService: async () => ({ context: { id: 'C', parent_id: null, user_id: null } }),
  subscribeEvents: () => () => {},
  fireEvent: async () => {},
  entityRegistry: async () => [],
  deviceRegistry: async () => [],
  areaRegistry: async () => [],
};

/** An authenticated HA session over an in-memory transport: `sent` holds every message, `ask` sends one and returns its answers. */
export async function haTestSession(backend: HaBackend<P>) {
  const sent: any[] = [];
  const s = new HaSession<P>({
    backend,
    log: silentLogger,
    transport: {
      send: (t) => {
        const v = JSON.parse(t);
        sent.push(...(Array.isArray(v) ? v : [v]));
      },
      close: () => {},
    },
  });
  s.open();
  await s.receive(JSON.stringify({ type: 'auth', access_token: 'good' }));
  const flush = () => new Promise((r) => setImmediate(r));
  await flush();
  return {
    sent,
    async ask(msg: Record<string, unknown>) {
      await s.receive(JSON.stringify(msg));
      await flush();
      await flush();
      return sent.filter((m) => m.id === msg.id);
    },
  };
}
