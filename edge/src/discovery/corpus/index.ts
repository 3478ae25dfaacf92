import { HA_DOCS } from './ha-docs.ts';
import { TASMOTA_ESPHOME } from './tasmota-esphome.ts';
import type { CorpusEntry } from './types.ts';
import { ZIGBEE2MQTT } from './zigbee2mqtt.ts';

/** Every corpus entry, in the order the corpus test publishes them (later entries may share devices with earlier ones). */
export const CORPUS: CorpusEntry[] = [...ZIGBEE2MQTT, ...TASMOTA_ESPHOME, ...HA_DOCS];
