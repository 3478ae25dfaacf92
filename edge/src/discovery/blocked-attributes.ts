/**
 * Keys a `json_attributes_topic` message may not set, as Home Assistant's MQTT integration drops
 * them (mqtt/entity.py MQTT_ATTRIBUTES_BLOCKED, and each platform's `_attributes_extra_blocked`):
 * an attribute document must not override what the config or the entity's own state says
 * (zigbee2mqtt's update entity sends `{"state": "available", …}` as its attributes, for one).
 */

const COMMON = [
  'assumed_state',
  'available',
  'device_class',
  'device_info',
  'entity_category',
  'entity_picture',
  'entity_registry_enabled_default',
  'extra_state_attributes',
  'force_update',
  'icon',
  'name',
  'should_poll',
  'state',
  'supported_features',
  'unique_id',
  'unit_of_measurement',
  // HA writes friendly_name itself, after the attributes
  'friendly_name',
];

const BY_DOMAIN: Record<string, string[]> = {
  sensor: ['last_reset', 'state_class'],
  light: [
    'color_mode',
    'brightness',
    'color_temp',
    'color_temp_kelvin',
    'effect',
    'effect_list',
    'hs_color',
    'max_color_temp_kelvin',
    'max_mireds',
    'min_color_temp_kelvin',
    'min_mireds',
    'rgb_color',
    'rgbw_color',
    'rgbww_color',
    'supported_color_modes',
    'xy_color',
  ],
  climate: [
    'current_humidity',
    'current_temperature',
    'fan_mode',
    'fan_modes',
    'humidity',
    'hvac_action',
    'hvac_modes',
    'max_humidity',
    'max_temp',
    'min_humidity',
    'min_temp',
    'preset_mode',
    'preset_modes',
    'swing_horizontal_mode',
    'swing_horizontal_modes',
    'swing_mode',
    'swing_modes',
    'target_temp_high',
    'target_temp_low',
    'target_temp_step',
    'temperature',
  ],
  cover: ['current_position', 'current_tilt_position'],
  fan: ['direction', 'oscillating', 'percentage_step', 'percentage', 'preset_mode', 'preset_modes'],
  lock: ['changed_by', 'code_format'],
  number: ['max', 'min', 'step'],
  select: ['options'],
  siren: ['available_tones', 'duration', 'tone', 'volume_level'],
  event: ['event_type', 'event_types'],
};

const BLOCKED = new Map<string, Set<string>>();

/** The keys a JSON attributes document may not set on an entity of `domain`. */
export function blockedJsonAttributes(domain: string): ReadonlySet<string> {
  let set = BLOCKED.get(domain);
  if (!set) {
    set = new Set([...COMMON, ...(BY_DOMAIN[domain] ?? []), '__proto__']);
    BLOCKED.set(domain, set);
  }
  return set;
}
