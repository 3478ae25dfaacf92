import mqtt from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';
import { EdgeDatabase } from '../db/database.ts';
import { silentLogger } from '../log.ts';
import { tempDir } from '../testing/edge.ts';
import { MqttAcl } from './acl.ts';
import { MqttBroker } from './broker.ts';
import { MqttUserStore } from './users.ts';

const cleanups: (() => unknown)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

/**
 * Aedes sends a QoS 1 PUBACK before it processes the message (on the next turn of the event
 * loop). A stop in between must not lose the acknowledged message.
 */
describe('MQTT broker stop', () => {
  it('delivers a QoS 1 message it has acknowledged to its listeners even when stop() starts right then', async () => {
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    const database = new EdgeDatabase(tmp.dir);
    database.open();
    cleanups.push(() => database.close());
    const users = new MqttUserStore(database);
    const creds = await users.create({ role: 'device' });
    const acl = new MqttAcl('homeassistant');
    let broker: MqttBroker | null = null;
    let stopping: Promise<void> | null = null;
    // the ACL is asked while Aedes authorizes the publish: stop begins exactly before the PUBACK goes out
    const stopDuringAck = Object.create(acl, {
      publishRefusal: {
        value: (...args: Parameters<MqttAcl['publishRefusal']>) => {
          if (args[1] === 'last/word' && !stopping) stopping = broker!.stop();
          return acl.publishRefusal(...args);
        },
      },
    }) as MqttAcl;
    broker = new MqttBroker({ port: 0, host: '127.0.0.1', users, acl: stopDuringAck, log: silentLogger });
    const seen: string[] = [];
    broker.onMessage((topic, payload) => seen.push(`${topic}=${payload.toString()}`));
    const port = await broker.start();

    const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${port}`, { ...creds, reconnectPeriod: 0 });
    client.on('error', () => {});
    cleanups.push(() => client.end(true));
    const closed = new Promise<boolean>((resolve) => client.once('close', () => resolve(false)));
    const acked = await Promise.race([client.publishAsync('last/word', 'kept', { qos: 1 }).then(() => true), closed]);
    await stopping;
    // accepted before stop: acknowledged and processed (after it, a publish is refused: not acknowledged)
    expect({ acked, processed: seen.includes('last/word=kept') }).toEqual({ acked: true, processed: true });
  });
});
