/** Tries a real MQTT CONNECT to a broker and classifies the outcome for the config flow. */
import { randomBytes } from 'node:crypto';

export interface BrokerSettings {
  host: string;
  port: number;
  username?: string;
  password?: string;
}

export type ConnectOutcome = 'ok' | 'cannot_connect' | 'invalid_auth';
export type ConnectCheck = (settings: BrokerSettings) => Promise<ConnectOutcome>;

/** CONNACK codes meaning "bad credentials / not authorized" in MQTT 3.1.1 and 5. */
const AUTH_CODES = new Set([4, 5, 134, 135]);

export function createConnectCheck(timeoutMs = 5000): ConnectCheck {
  return async (s) => {
    // the MQTT client library (and its streams, proxy and timer helpers: ~600 kB of the executable's
    // script) is loaded on the first check, not at every edge start
    const { default: mqtt } = await import('mqtt');
    return new Promise<ConnectOutcome>((resolve) => {
      let done = false;
      const client = mqtt.connect({
        host: s.host,
        port: s.port,
        protocol: 'mqtt',
        username: s.username || undefined,
        password: s.password || undefined,
        clientId: `smarthome-edge-check-${randomBytes(6).toString('hex')}`,
        connectTimeout: timeoutMs,
        reconnectPeriod: 0,
        clean: true,
      });
      const finish = (outcome: ConnectOutcome) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        client.removeAllListeners();
        client.on('error', () => {});
        client.end(true);
        resolve(outcome);
      };
      const timer = setTimeout(() => finish('cannot_connect'), timeoutMs);
      client.on('connect', () => finish('ok'));
      client.on('error', (err: Error & { code?: unknown }) => {
        finish(typeof err.code === 'number' && AUTH_CODES.has(err.code) ? 'invalid_auth' : 'cannot_connect');
      });
      client.on('close', () => finish('cannot_connect'));
    });
  };
}
