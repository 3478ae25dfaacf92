import type { HaServices } from '@smarthome/protocol/ha/index';

/**
 * The services the edges' platforms offer per entity domain (the MQTT components and the demo
 * integration), by HA's names. The cloud's mirror holds entities, not the edges' service
 * registries: get_services lists these for the domains of the entities in scope, and a call
 * the edge does not support still answers its own error.
 */
const BY_DOMAIN: Record<string, string[]> = {
  light: ['toggle', 'turn_off', 'turn_on'],
  switch: ['toggle', 'turn_off', 'turn_on'],
  fan: ['oscillate', 'set_percentage', 'set_preset_mode', 'toggle', 'turn_off', 'turn_on'],
  cover: ['close_cover', 'open_cover', 'set_cover_position', 'stop_cover', 'toggle'],
  lock: ['lock', 'open', 'unlock'],
  climate: ['set_hvac_mode', 'set_temperature', 'turn_off', 'turn_on'],
  button: ['press'],
  number: ['set_value'],
  select: ['select_option'],
  siren: ['toggle', 'turn_off', 'turn_on'],
  humidifier: ['set_humidity', 'set_mode', 'toggle', 'turn_off', 'turn_on'],
  vacuum: ['locate', 'pause', 'return_to_base', 'start', 'stop'],
  text: ['set_value'],
  scene: ['turn_on'],
  media_player: ['media_pause', 'media_play', 'media_stop', 'toggle', 'turn_off', 'turn_on', 'volume_set'],
};

/** get_services for entities of these domains (domains without services are left out, as HA does). */
export function servicesFor(domains: Iterable<string>): HaServices {
  const out: HaServices = {};
  for (const domain of [...new Set(domains)].sort()) {
    const names = BY_DOMAIN[domain];
    if (!names) continue;
    out[domain] = Object.fromEntries(
      names.map((name) => [
        name,
        {
          name: name.replace(/_/g, ' '),
          description: '',
          fields: {},
          target: { entity: [{ domain: [domain] }] },
        },
      ]),
    );
  }
  return out;
}
