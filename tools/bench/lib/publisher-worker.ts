import { parentPort, workerData } from 'node:worker_threads';
import mqtt from 'mqtt';

/**
 * Publishes `messages` QoS messages round-robin over `topics` with at most `window` in flight,
 * in its own thread so the broker under test does not share an event loop with its load.
 */
interface Job {
  url: string;
  username?: string;
  password?: string;
  topics: string[];
  messages: number;
  window: number;
  qos: 0 | 1;
  offset: number;
}
const job = workerData as Job;

const client = await mqtt.connectAsync(job.url, {
  username: job.username,
  password: job.password,
  reconnectPeriod: 0,
  clean: true,
});
parentPort!.postMessage({ type: 'connected' });
await new Promise<void>((resolve) => parentPort!.once('message', () => resolve()));

const started = performance.now();
let sent = 0;
let acked = 0;
await new Promise<void>((resolve, reject) => {
  const pump = () => {
    while (sent < job.messages && sent - acked < job.window) {
      const i = sent++;
      const topic = job.topics[i % job.topics.length];
      // every message changes the value, so every message is a real state change
      client.publish(topic, JSON.stringify({ value: job.offset + i, ts: i }), { qos: job.qos }, (err) => {
        if (err) return reject(err);
        acked++;
        if (acked === job.messages) resolve();
        else pump();
      });
    }
  };
  pump();
});
const elapsedMs = performance.now() - started;
await client.endAsync();
parentPort!.postMessage({ type: 'done', elapsedMs, messages: job.messages });
