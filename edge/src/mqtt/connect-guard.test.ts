import net from 'node:net';
import { describe, expect, it } from 'vitest';
import type { Edge } from '../edge.ts';
import { connect, recordingLogger } from '../testing/edge.ts';
import { useEdge } from '../testing/use-edge.ts';

let edge: Edge;
const logs = recordingLogger();

useEdge({ logger: logs }, (started) => {
  edge = started;
});

/** MQTT's remaining length: 7 bits a byte, the high bit saying another byte follows. */
function varint(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return out;
}

/**
 * An anonymous peer announcing a CONNECT of `declared` bytes, its header sent a byte at a time
 * (so the length spans reads), then as many 1 MB chunks as the broker takes, up to 64.
 * Resolves with the MB written before the broker closed the connection (null: never closed).
 */
async function announce(declared: number): Promise<number | null> {
  const sock = net.connect(edge.ports.mqtt, '127.0.0.1');
  sock.setNoDelay(true);
  sock.on('error', () => {});
  await new Promise((r) => sock.once('connect', r));
  let closed = false;
  const close = new Promise((r) => sock.once('close', r)).then(() => (closed = true));
  for (const byte of [0x10, ...varint(declared)]) {
    sock.write(Buffer.from([byte]));
    await new Promise((r) => setTimeout(r, 10));
  }
  const chunk = Buffer.alloc(1 << 20);
  let sent = 0;
  while (!closed && sent < 64) {
    if (!sock.write(chunk)) await Promise.race([new Promise((r) => sock.once('drain', r)), close]);
    sent++;
  }
  await Promise.race([close, new Promise((r) => setTimeout(r, 500))]);
  sock.destroy();
  return closed ? sent : null;
}

describe('the broker bounds what an unauthenticated client may send', () => {
  it('closes a connection whose CONNECT declares more than 64 KiB, before buffering it', async () => {
    const sent = await announce(200_000_000);
    expect(sent).not.toBeNull();
    // what the kernel's buffers took before the close reached the writer, not what the broker kept
    expect(sent).toBeLessThan(32);
    expect(logs.lines).toContainEqual({
      level: 'warn',
      msg: expect.stringContaining('CONNECT declared more than 65536 bytes'),
    });
  });

  it('lets a CONNECT of up to 64 KiB through: a client with a 60 KB will connects, publishes, and its will is kept', async () => {
    const will = 'w'.repeat(60_000);
    const creds = await edge.createMqttCredentials({ username: 'big-will' });
    const client = await connect(edge, creds, {
      will: { topic: 'big-will/status', payload: Buffer.from(will), qos: 1, retain: false },
    });
    const watcher = await connect(edge, await edge.createMqttCredentials({ username: 'watcher', role: 'integration' }));
    const got = new Promise<string>((resolve) => watcher.on('message', (_t, p) => resolve(p.toString())));
    await watcher.subscribeAsync('big-will/status', { qos: 1 });
    await client.publishAsync('big-will/state', 'ok', { qos: 1 });
    // an unclean end sends the will
    client.stream.destroy();
    expect((await got).length).toBe(60_000);
    await watcher.endAsync();
    expect(logs.warnings().filter((l) => l.includes('CONNECT declared'))).toHaveLength(1);
  });
});
