import { parseArgs } from 'node:util';
import { Simulator } from './simulator.ts';
import { KINDS } from './kinds.ts';

/** `pnpm sim --mqtt mqtt://user:pass@host:port --devices N [--interval ms]` */
function usage(msg?: string): never {
  if (msg) process.stderr.write(`error: ${msg}\n`);
  process.stderr.write(
    'usage: pnpm sim --mqtt mqtt://user:pass@host:port --devices N [--interval ms] [--prefix homeassistant] [--id sim] [--seed 1]\n',
  );
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      mqtt: { type: 'string' },
      devices: { type: 'string' },
      interval: { type: 'string' },
      prefix: { type: 'string' },
      id: { type: 'string' },
      seed: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  }));
} catch (err) {
  usage((err as Error).message);
}
if (values.help) usage();
const url = values.mqtt ?? process.env.MQTT_URL;
if (!url) usage('--mqtt is required');
// one device of each kind by default
const devices = Number(values.devices ?? String(KINDS.length));
const interval = Number(values.interval ?? '5000');
if (!Number.isInteger(devices) || devices < 1) usage('--devices must be a positive integer');
if (!Number.isFinite(interval) || interval < 0) usage('--interval must be a number of milliseconds');

const sim = new Simulator({
  url,
  devices,
  intervalMs: interval,
  prefix: values.prefix,
  id: values.id,
  seed: values.seed ? Number(values.seed) : undefined,
  log: (m) => process.stderr.write(`${new Date().toISOString()} sim ${m}\n`),
});
try {
  await sim.start();
} catch (err) {
  process.stderr.write(
    `error: cannot connect to ${url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@')}: ${(err as Error).message}\n`,
  );
  process.exit(1);
}
process.stdout.write(
  `ready ${JSON.stringify({ devices: sim.devices.length, entities: sim.devices.reduce((n, d) => n + d.kind.entities(d.base).length, 0) })}\n`,
);
// The first SIGTERM/SIGINT stops the simulator (bounded: a broker that is down answers nothing);
// later ones, as pnpm or a terminal send them, are ignored until it has.
let stopping = false;
const stop = (signal: NodeJS.Signals) => {
  if (stopping) {
    process.stderr.write(`${new Date().toISOString()} sim ${signal} while stopping: ignored\n`);
    return;
  }
  stopping = true;
  const force = setTimeout(() => {
    process.stderr.write('error: the simulator did not stop within 5 s\n');
    process.exit(1);
  }, 5000);
  force.unref();
  void sim.stop().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`error: stopping the simulator failed: ${(err as Error)?.message ?? String(err)}\n`);
      process.exit(1);
    },
  );
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
