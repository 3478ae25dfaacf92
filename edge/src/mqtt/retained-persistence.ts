import MemoryPersistence from 'aedes-persistence/asyncPersistence.js';
import type { RetainedStore } from './retained-store.ts';

type Packet = Parameters<MemoryPersistence['storeRetained']>[0];

/**
 * Aedes' in-memory persistence (subscriptions, in-flight QoS, wills stay in memory) with
 * retained messages also kept on disk through RetainedStore: loaded at setup, written
 * behind on every change.
 */
export class RetainedOnDiskPersistence extends MemoryPersistence {
  private readonly store: RetainedStore;

  constructor(store: RetainedStore) {
    super();
    this.store = store;
  }

  override async setup(broker: unknown): Promise<void> {
    await super.setup(broker);
    for (const m of this.store.load()) {
      await super.storeRetained({
        cmd: 'publish',
        topic: m.topic,
        payload: m.payload,
        qos: m.qos,
        retain: true,
        dup: false,
        brokerId: '',
        brokerCounter: 0,
      } as unknown as Packet);
    }
  }

  override async storeRetained(packet: Packet): Promise<void> {
    await super.storeRetained(packet);
    const p = packet as unknown as { topic: string; payload: string | Uint8Array; qos?: number };
    const payload = typeof p.payload === 'string' ? Buffer.from(p.payload) : Buffer.from(p.payload);
    this.store.put({ topic: p.topic, payload, qos: p.qos === 1 || p.qos === 2 ? p.qos : 0 });
  }
}
