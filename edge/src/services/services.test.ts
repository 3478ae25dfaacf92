import { afterAll, describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import type { Edge } from '../edge.ts';
import { collector, connect, waitFor } from '../testing/edge.ts';
import { useEdge } from '../testing/use-edge.ts';

let edge: Edge;
let device: MqttClient;
let inbox: Awaited<ReturnType<typeof collector>>;

const CONFIGS: Record<string, Record<string, unknown>> = {
  'light/lamp': {
    name: 'Lamp',
    uniq_id: 'lamp',
    cmd_t: 'lamp/set',
    stat_t: 'lamp/state',
    bri_cmd_t: 'lamp/bri/set',
    bri_scl: 100,
    clr_temp_cmd_t: 'lamp/ct/set',
    rgb_cmd_t: 'lamp/rgb/set',
  },
  'light/first': {
    name: 'First',
    uniq_id: 'first',
    cmd_t: 'first/set',
    bri_cmd_t: 'first/bri/set',
    on_cmd_type: 'first',
    pl_on: 'on',
    pl_off: 'off',
  },
  'light/dimmer': {
    name: 'Dimmer',
    uniq_id: 'dimmer',
    cmd_t: 'dimmer/set',
    bri_cmd_t: 'dimmer/bri/set',
    on_cmd_type: 'brightness',
  },
  'light/strip': {
    name: 'Strip',
    uniq_id: 'strip',
    schema: 'json',
    cmd_t: 'strip/set',
    stat_t: 'strip/state',
    brightness: true,
    sup_clrm: ['rgb', 'color_temp'],
  },
  'switch/plug': { name: 'Plug', uniq_id: 'plug', cmd_t: 'plug/set', stat_t: 'plug/state' },
  'switch/relay': { name: 'Relay', uniq_id: 'relay', cmd_t: 'relay/set', pl_on: '1', pl_off: '0' },
  'cover/garage': {
    name: 'Garage',
    uniq_id: 'garage',
    cmd_t: 'garage/set',
    stat_t: 'garage/state',
    set_pos_t: 'garage/pos/set',
    pos_open: 255,
    pos_clsd: 0,
  },
  'lock/front': { name: 'Front', uniq_id: 'front', cmd_t: 'front/set', stat_t: 'front/state', pl_open: 'UNLATCH' },
  'climate/thermo': {
    name: 'Thermo',
    uniq_id: 'thermo',
    mode_cmd_t: 'thermo/mode/set',
    mode_stat_t: 'thermo/mode',
    temp_cmd_t: 'thermo/temp/set',
    modes: ['off', 'heat', 'cool'],
    min_temp: 10,
    max_temp: 30,
    fan_mode_cmd_t: 'thermo/fan/set',
  },
  'fan/ceiling': {
    name: 'Ceiling',
    uniq_id: 'ceiling',
    cmd_t: 'fan/set',
    stat_t: 'fan/state',
    pct_cmd_t: 'fan/pct/set',
    spd_rng_min: 1,
    spd_rng_max: 3,
    pr_mode_cmd_t: 'fan/preset/set',
    pr_modes: ['eco'],
    osc_cmd_t: 'fan/osc/set',
  },
  'button/reboot': { name: 'Reboot', uniq_id: 'reboot', cmd_t: 'router/reboot' },
  'number/volume': {
    name: 'Volume',
    uniq_id: 'volume',
    cmd_t: 'vol/set',
    min: 0,
    max: 50,
    cmd_tpl: '{"volume": {{ value }}}',
  },
  'select/mode': { name: 'Mode', uniq_id: 'mode', cmd_t: 'mode/set', ops: ['eco', 'quick'] },
};

useEdge({}, async (started) => {
  edge = started;
  device = await connect(edge, await edge.createMqttCredentials({ username: 'dev' }));
  for (const [path, cfg] of Object.entries(CONFIGS))
    await device.publishAsync(`homeassistant/${path}/config`, JSON.stringify(cfg), { qos: 1, retain: true });
  await waitFor(() => edge.registry.listEntities().length === Object.keys(CONFIGS).length, 3000, 'entities');
  const topics = new Set<string>();
  for (const cfg of Object.values(CONFIGS))
    for (const [k, v] of Object.entries(cfg)) if (k.includes('cmd_t') || k === 'set_pos_t') topics.add(v as string);
  inbox = await collector(device, [...topics]);
});
afterAll(async () => {
  await device?.endAsync();
});

async function call(domain: string, service: string, entity: string, data: Record<string, unknown> = {}, n = 1) {
  await edge.callService(domain, service, entity, data);
  return (await inbox.next(n)).map((m) => `${m.topic} ${m.payload}`);
}

describe('service calls publish the payload each component expects', () => {
  it('light, default schema', async () => {
    expect(await call('light', 'turn_on', 'light.lamp')).toEqual(['lamp/set ON']);
    expect(await call('light', 'turn_on', 'light.lamp', { brightness: 255 }, 2)).toEqual([
      'lamp/bri/set 100',
      'lamp/set ON',
    ]);
    expect(await call('light', 'turn_on', 'light.lamp', { brightness_pct: 50, color_temp: 300 }, 3)).toEqual([
      'lamp/bri/set 50',
      'lamp/ct/set 300',
      'lamp/set ON',
    ]);
    expect(await call('light', 'turn_on', 'light.lamp', { rgb_color: [255, 0, 10] }, 2)).toEqual([
      'lamp/rgb/set 255,0,10',
      'lamp/set ON',
    ]);
    expect(await call('light', 'turn_off', 'light.lamp')).toEqual(['lamp/set OFF']);
    expect(await call('light', 'turn_on', 'light.first', { brightness: 51 }, 2)).toEqual([
      'first/set on',
      'first/bri/set 51',
    ]);
    expect(await call('light', 'turn_on', 'light.dimmer')).toEqual(['dimmer/bri/set 255']);
    expect(await call('light', 'turn_on', 'light.dimmer', { brightness: 10 })).toEqual(['dimmer/bri/set 10']);
  });

  it('light, JSON schema', async () => {
    expect(
      await call('light', 'turn_on', 'light.strip', { brightness: 128, rgb_color: [1, 2, 3], transition: 2 }),
    ).toEqual(['strip/set {"state":"ON","color":{"r":1,"g":2,"b":3},"transition":2,"brightness":128}']);
    expect(await call('light', 'turn_on', 'light.strip', { color_temp_kelvin: 4000 })).toEqual([
      'strip/set {"state":"ON","color_temp":250}',
    ]);
    expect(await call('light', 'turn_off', 'light.strip')).toEqual(['strip/set {"state":"OFF"}']);
  });

  it('toggle follows the current state; optimistic entities update at once', async () => {
    await device.publishAsync('plug/state', 'ON', { qos: 1 });
    await waitFor(() => edge.states.get('switch.plug')?.state === 'on');
    expect(await call('switch', 'toggle', 'switch.plug')).toEqual(['plug/set OFF']);
    // not optimistic: the state waits for the device
    expect(edge.states.get('switch.plug')?.state).toBe('on');
    expect(await call('switch', 'turn_on', 'switch.relay')).toEqual(['relay/set 1']);
    expect(edge.states.get('switch.relay')?.state).toBe('on');
    expect(await call('switch', 'toggle', 'switch.relay')).toEqual(['relay/set 0']);
    expect(edge.states.get('switch.relay')?.state).toBe('off');
    // light.first is optimistic and was turned on above
    expect(await call('light', 'toggle', 'light.first', {}, 1)).toEqual(['first/set off']);
    expect(edge.states.get('light.first')?.state).toBe('off');
  });

  it('cover', async () => {
    expect(await call('cover', 'open_cover', 'cover.garage')).toEqual(['garage/set OPEN']);
    expect(await call('cover', 'close_cover', 'cover.garage')).toEqual(['garage/set CLOSE']);
    expect(await call('cover', 'stop_cover', 'cover.garage')).toEqual(['garage/set STOP']);
    expect(await call('cover', 'set_cover_position', 'cover.garage', { position: 50 })).toEqual(['garage/pos/set 128']);
  });

  it('lock', async () => {
    expect(await call('lock', 'lock', 'lock.front')).toEqual(['front/set LOCK']);
    expect(await call('lock', 'unlock', 'lock.front')).toEqual(['front/set UNLOCK']);
    expect(await call('lock', 'open', 'lock.front')).toEqual(['front/set UNLATCH']);
  });

  it('climate', async () => {
    expect(await call('climate', 'set_temperature', 'climate.thermo', { temperature: 21.5 })).toEqual([
      'thermo/temp/set 21.5',
    ]);
    expect(await call('climate', 'set_hvac_mode', 'climate.thermo', { hvac_mode: 'cool' })).toEqual([
      'thermo/mode/set cool',
    ]);
    expect(
      await call('climate', 'set_temperature', 'climate.thermo', { temperature: 19, hvac_mode: 'heat' }, 2),
    ).toEqual(['thermo/mode/set heat', 'thermo/temp/set 19']);
    expect(await call('climate', 'set_fan_mode', 'climate.thermo', { fan_mode: 'low' })).toEqual([
      'thermo/fan/set low',
    ]);
    expect(await call('climate', 'turn_off', 'climate.thermo')).toEqual(['thermo/mode/set off']);
  });

  it('fan', async () => {
    expect(await call('fan', 'turn_on', 'fan.ceiling')).toEqual(['fan/set ON']);
    expect(await call('fan', 'turn_on', 'fan.ceiling', { percentage: 100, preset_mode: 'eco' }, 3)).toEqual([
      'fan/set ON',
      'fan/pct/set 3',
      'fan/preset/set eco',
    ]);
    expect(await call('fan', 'set_percentage', 'fan.ceiling', { percentage: 50 })).toEqual(['fan/pct/set 2']);
    expect(await call('fan', 'set_percentage', 'fan.ceiling', { percentage: 0 })).toEqual(['fan/set OFF']);
    expect(await call('fan', 'oscillate', 'fan.ceiling', { oscillating: true })).toEqual(['fan/osc/set oscillate_on']);
    expect(await call('fan', 'turn_off', 'fan.ceiling')).toEqual(['fan/set OFF']);
  });

  it('button, number, select', async () => {
    expect(await call('button', 'press', 'button.reboot')).toEqual(['router/reboot PRESS']);
    expect(Date.parse(edge.states.get('button.reboot')!.state!)).toBeGreaterThan(Date.now() - 5000);
    expect(await call('number', 'set_value', 'number.volume', { value: 30 })).toEqual(['vol/set {"volume": 30}']);
    expect(edge.states.get('number.volume')?.state).toBe('30');
    expect(await call('select', 'select_option', 'select.mode', { option: 'quick' })).toEqual(['mode/set quick']);
    expect(edge.states.get('select.mode')?.state).toBe('quick');
  });

  it('refuses bad calls without publishing anything', async () => {
    const before = inbox.messages.length;
    await expect(edge.callService('light', 'fly', 'light.lamp')).rejects.toThrow(/not supported/);
    await expect(edge.callService('light', 'turn_on', 'light.nope')).rejects.toThrow(/not found/);
    await expect(edge.callService('light', 'turn_on', 'switch.plug')).rejects.toThrow(/not found/);
    await expect(edge.callService('number', 'set_value', 'number.volume', { value: 99 })).rejects.toThrow(/at most 50/);
    await expect(edge.callService('select', 'select_option', 'select.mode', { option: 'x' })).rejects.toThrow(/one of/);
    await expect(edge.callService('climate', 'set_temperature', 'climate.thermo', { temperature: 5 })).rejects.toThrow(
      /at least 10/,
    );
    await expect(edge.callService('light', 'turn_on', 'light.lamp', { rgb_color: [1, 2] })).rejects.toThrow(
      /rgb_color/,
    );
    await new Promise((r) => setTimeout(r, 50));
    expect(inbox.messages.length).toBe(before);
  });
});
