import type { HaConfig } from '@smarthome/protocol/ha/index';
import { toHaConfig } from '@smarthome/protocol/server/ha/index';

/** get_config on the edge: the components of its entities' domains and config entries, in its time zone. */
export function edgeHaConfig(domains: string[], locationName: string | undefined): HaConfig {
  return toHaConfig({
    components: ['api', 'websocket_api', 'mqtt', 'homeassistant', ...domains],
    location_name: locationName ?? 'Home',
    time_zone: Intl.DateTimeFormat().resolvedOptions().timeZone,
  });
}
