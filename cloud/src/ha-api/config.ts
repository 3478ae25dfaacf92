import type { HaConfig } from '@smarthome/protocol/ha/index';
import { toHaConfig } from '@smarthome/protocol/server/ha/index';

/** get_config for a cloud caller: a fixed home, with the components of the domains it sees. */
export function cloudHaConfig(domains: string[]): HaConfig {
  return toHaConfig({
    components: ['api', 'websocket_api', 'homeassistant', ...domains],
    location_name: 'Home',
    time_zone: 'UTC',
  });
}
