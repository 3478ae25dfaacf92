import { HA_VERSION, type HaConfig } from '../../ha/index.ts';

/**
 * HA's get_config answer for a home of ours: metric units, no coordinates, and the components
 * (integrations) a client looks for before it uses their commands. Edge and cloud differ only
 * in the components, the name and the time zone.
 */
export function toHaConfig(home: { components: Iterable<string>; location_name: string; time_zone: string }): HaConfig {
  return {
    latitude: 0,
    longitude: 0,
    elevation: 0,
    radius: 100,
    unit_system: {
      length: 'km',
      accumulated_precipitation: 'mm',
      mass: 'g',
      pressure: 'Pa',
      temperature: '°C',
      volume: 'L',
      wind_speed: 'm/s',
    },
    location_name: home.location_name,
    time_zone: home.time_zone,
    components: [...new Set(home.components)].sort(),
    config_dir: '/config',
    allowlist_external_dirs: [],
    allowlist_external_urls: [],
    version: HA_VERSION,
    config_source: 'storage',
    recovery_mode: false,
    safe_mode: false,
    state: 'RUNNING',
    external_url: null,
    internal_url: null,
    currency: 'EUR',
    country: null,
    language: 'en',
    debug: false,
  };
}
