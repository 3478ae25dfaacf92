import { describe, expect, it } from 'vitest';
import { USAGE, UsageError, parseCommand } from './cli.ts';

const run = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
  const cmd = parseCommand(argv, env);
  if (cmd.kind !== 'run') throw new Error(`not a run command: ${cmd.kind}`);
  return cmd.config;
};

describe('edge command line', () => {
  it('takes the call_url allow-list from --call-url-allow, else CALL_URL_ALLOW (flags win)', () => {
    expect(run([]).callUrlAllow).toEqual([]);
    expect(run([], { CALL_URL_ALLOW: ' 10.0.0.0/8, nas.lan ,' }).callUrlAllow).toEqual(['10.0.0.0/8', 'nas.lan']);
    expect(run(['--call-url-allow', '192.168.1.20,fd00::/8'], { CALL_URL_ALLOW: '10.0.0.0/8' }).callUrlAllow).toEqual([
      '192.168.1.20',
      'fd00::/8',
    ]);
  });

  it('takes the recorder retention from --history-days, else HISTORY_DAYS, default 10 (0 = off)', () => {
    expect(run([]).historyDays).toBe(10);
    expect(run([], { HISTORY_DAYS: '30' }).historyDays).toBe(30);
    expect(run(['--history-days', '0'], { HISTORY_DAYS: '30' }).historyDays).toBe(0);
    for (const bad of ['-1', '1.5', 'ten']) expect(() => run(['--history-days', bad])).toThrow(UsageError);
  });

  it('refuses an allow-list entry that is neither an address, a CIDR nor a host name', () => {
    for (const bad of ['10.0.0.0/33', 'not a host', 'http://x/']) {
      expect(() => run(['--call-url-allow', bad])).toThrow(UsageError);
    }
  });
});

const parse = (argv: string[], env: NodeJS.ProcessEnv = {}) => parseCommand(argv, env);

describe('pnpm edge mqtt-owner arguments', () => {
  it('reads list, set and release; a number is a device id, anything else a discovery topic', () => {
    expect(parse(['mqtt-owner', 'list'])).toEqual({
      kind: 'mqtt-owner',
      dataDir: './data/edge',
      port: 8123,
      action: { kind: 'list' },
    });
    expect(parse(['mqtt-owner', 'set', '12', 'plug-new', '--port', '9000', '--data-dir', '/d'])).toEqual({
      kind: 'mqtt-owner',
      dataDir: '/d',
      port: 9000,
      action: { kind: 'set', target: { device_id: 12 }, username: 'plug-new' },
    });
    expect(
      parse(['mqtt-owner', 'release', 'homeassistant/switch/p/config'], { EDGE_PORT: '8200', DATA_DIR: '/e' }),
    ).toEqual({
      kind: 'mqtt-owner',
      dataDir: '/e',
      port: 8200,
      action: { kind: 'set', target: { discovery_topic: 'homeassistant/switch/p/config' }, username: null },
    });
  });

  it('refuses incomplete or unknown forms with a usage error', () => {
    const cases: [string[], string][] = [
      [['mqtt-owner', 'set', '12'], 'mqtt-owner set needs <device-id|discovery-topic> <username>'],
      [['mqtt-owner', 'set', '12', 'a', 'b'], 'mqtt-owner set needs <device-id|discovery-topic> <username>'],
      [['mqtt-owner', 'release'], 'mqtt-owner release needs <device-id|discovery-topic>'],
      [['mqtt-owner'], 'mqtt-owner needs list, set or release'],
      [['mqtt-owner', 'give', '1', 'a'], 'unknown command: mqtt-owner give 1 a (list, set or release)'],
      [['mqtt-owner', 'list', '--port', '0'], "mqtt-owner needs the running edge's --port (not 0)"],
      [['mqtt-owner', 'list', '--port', 'x'], '--port must be a port number (0-65535), got "x"'],
    ];
    for (const [argv, message] of cases) {
      expect(() => parse(argv), argv.join(' ')).toThrow(UsageError);
      expect(() => parse(argv), argv.join(' ')).toThrow(message);
    }
  });
});

describe('edge CLI: write-behind windows', () => {
  it('defaults to 250 ms for states and 1000 ms for retained messages', () => {
    expect(run([])).toMatchObject({ stateFlushMs: 250, retainedFlushMs: 1000 });
  });

  it('takes --state-flush-ms / --retained-flush-ms, or STATE_FLUSH_MS / RETAINED_FLUSH_MS; flags win', () => {
    expect(run(['--state-flush-ms', '50', '--retained-flush-ms', '0'])).toMatchObject({
      stateFlushMs: 50,
      retainedFlushMs: 0,
    });
    expect(run([], { STATE_FLUSH_MS: '100', RETAINED_FLUSH_MS: '2000' })).toMatchObject({
      stateFlushMs: 100,
      retainedFlushMs: 2000,
    });
    expect(run(['--state-flush-ms', '20'], { STATE_FLUSH_MS: '100' })).toMatchObject({ stateFlushMs: 20 });
  });

  it('refuses values that are not whole milliseconds within 0-60000', () => {
    for (const bad of ['-1', '60001', '1e9', 'soon', '12.5', '']) {
      expect(() => run(['--state-flush-ms', bad]), bad).toThrow(UsageError);
    }
    expect(() => run([], { RETAINED_FLUSH_MS: '3600000' })).toThrow(/--retained-flush-ms must be .* 0-60000/);
  });

  it('lists both flags in the usage text', () => {
    expect(USAGE).toMatch(/--state-flush-ms/);
    expect(USAGE).toMatch(/--retained-flush-ms/);
  });
});
