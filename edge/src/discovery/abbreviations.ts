import { isJsonObject } from '@smarthome/protocol/common';
/**
 * Home Assistant MQTT discovery abbreviations (the published convention devices speak:
 * https://www.home-assistant.io/integrations/mqtt/#supported-abbreviations-in-mqtt-discovery-messages).
 */
const PAIRS = `act_t action_topic|act_tpl action_template|avty availability|avty_mode availability_mode|avty_t availability_topic|
avty_tpl availability_template|b_tpl blue_template|bri_cmd_t brightness_command_topic|bri_cmd_tpl brightness_command_template|
bri_scl brightness_scale|bri_stat_t brightness_state_topic|bri_tpl brightness_template|bri_val_tpl brightness_value_template|
clr_temp_cmd_t color_temp_command_topic|clr_temp_cmd_tpl color_temp_command_template|clr_temp_stat_t color_temp_state_topic|
clr_temp_tpl color_temp_template|clr_temp_val_tpl color_temp_value_template|clr_temp_k color_temp_kelvin|clrm color_mode|
clrm_stat_t color_mode_state_topic|clrm_val_tpl color_mode_value_template|cmd_off_tpl command_off_template|
cmd_on_tpl command_on_template|cmd_t command_topic|cmd_tpl command_template|cmps components|curr_temp_t current_temperature_topic|
curr_temp_tpl current_temperature_template|dev device|dev_cla device_class|e encoding|en enabled_by_default|ent_cat entity_category|
ent_pic entity_picture|exp_aft expire_after|fan_mode_cmd_t fan_mode_command_topic|fan_mode_cmd_tpl fan_mode_command_template|
fan_mode_stat_t fan_mode_state_topic|fan_mode_stat_tpl fan_mode_state_template|fan_modes fan_modes|frc_upd force_update|
fx_cmd_t effect_command_topic|fx_cmd_tpl effect_command_template|fx_list effect_list|fx_stat_t effect_state_topic|
fx_tpl effect_template|fx_val_tpl effect_value_template|g_tpl green_template|hs_cmd_t hs_command_topic|hs_stat_t hs_state_topic|
hs_val_tpl hs_value_template|ic icon|init initial|json_attr json_attributes|json_attr_t json_attributes_topic|
json_attr_tpl json_attributes_template|max max|min min|max_mirs max_mireds|min_mirs min_mireds|max_temp max_temp|min_temp min_temp|
max_kltn max_kelvin|min_kltn min_kelvin|mode mode|mode_cmd_t mode_command_topic|mode_cmd_tpl mode_command_template|
mode_stat_t mode_state_topic|mode_stat_tpl mode_state_template|modes modes|name name|o origin|obj_id object_id|def_ent_id default_entity_id|
off_dly off_delay|on_cmd_type on_command_type|ops options|opt optimistic|osc_cmd_t oscillation_command_topic|
osc_cmd_tpl oscillation_command_template|osc_stat_t oscillation_state_topic|osc_val_tpl oscillation_value_template|p platform|
pct_cmd_t percentage_command_topic|pct_cmd_tpl percentage_command_template|pct_stat_t percentage_state_topic|
pct_val_tpl percentage_value_template|pl payload|pl_avail payload_available|pl_cls payload_close|pl_lock payload_lock|
pl_not_avail payload_not_available|pl_off payload_off|pl_on payload_on|pl_open payload_open|pl_osc_off payload_oscillation_off|
pl_osc_on payload_oscillation_on|pl_prs payload_press|pl_rst payload_reset|pl_rst_pct payload_reset_percentage|
pl_rst_pr_mode payload_reset_preset_mode|pl_stop payload_stop|pl_unlk payload_unlock|pos_clsd position_closed|pos_open position_open|
pos_t position_topic|pos_tpl position_template|pow_cmd_t power_command_topic|pow_cmd_tpl power_command_template|
pr_mode_cmd_t preset_mode_command_topic|pr_mode_cmd_tpl preset_mode_command_template|pr_mode_stat_t preset_mode_state_topic|
pr_mode_val_tpl preset_mode_value_template|pr_modes preset_modes|prec precision|qos qos|r_tpl red_template|ret retain|
rgb_cmd_t rgb_command_topic|rgb_cmd_tpl rgb_command_template|rgb_stat_t rgb_state_topic|rgb_val_tpl rgb_value_template|
schema schema|set_pos_t set_position_topic|set_pos_tpl set_position_template|spd_rng_max speed_range_max|spd_rng_min speed_range_min|
stat_cla state_class|stat_clsd state_closed|stat_closing state_closing|stat_jam state_jammed|stat_locked state_locked|
stat_locking state_locking|stat_off state_off|stat_on state_on|stat_open state_open|stat_opening state_opening|
stat_stopped state_stopped|stat_t state_topic|stat_tpl state_template|stat_unlocked state_unlocked|stat_unlocking state_unlocking|
stat_val_tpl state_value_template|step step|sug_dsp_prc suggested_display_precision|sup_clrm supported_color_modes|
sup_feat supported_features|t topic|temp_cmd_t temperature_command_topic|temp_cmd_tpl temperature_command_template|
temp_hi_cmd_t temperature_high_command_topic|temp_hi_cmd_tpl temperature_high_command_template|
temp_hi_stat_t temperature_high_state_topic|temp_hi_stat_tpl temperature_high_state_template|
temp_lo_cmd_t temperature_low_command_topic|temp_lo_cmd_tpl temperature_low_command_template|
temp_lo_stat_t temperature_low_state_topic|temp_lo_stat_tpl temperature_low_state_template|temp_stat_t temperature_state_topic|
temp_stat_tpl temperature_state_template|temp_step temp_step|temp_unit temperature_unit|tilt_cmd_t tilt_command_topic|
tilt_status_t tilt_status_topic|uniq_id unique_id|unit_of_meas unit_of_measurement|val_tpl value_template|
cod_format code_format|brightness brightness|clr_temp color_temp|act_t action_topic|ptrn pattern|min_hum min_humidity|max_hum max_humidity|
atype automation_type|stype subtype|tilt_clsd_val tilt_closed_value|tilt_opnd_val tilt_opened_value|tilt_min tilt_min|
tilt_max tilt_max|tilt_opt tilt_optimistic|tilt_cmd_tpl tilt_command_template|tilt_status_tpl tilt_status_template|
pl_stop_tilt payload_stop_tilt|pl_inst payload_install|l_ver_t latest_version_topic|l_ver_tpl latest_version_template|
rel_s release_summary|rel_u release_url|sup_dur support_duration|sup_vol support_volume_set|avty_mode availability_mode|
xy_cmd_t xy_command_topic|xy_stat_t xy_state_topic|xy_val_tpl xy_value_template|
migr_discvry migrate_discovery|evt_typ event_types|dsp_prc display_precision|cmd_off_tpl command_off_template`;

function table(src: string): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  for (const pair of src.split('|')) {
    const [short, long] = pair.trim().split(/\s+/);
    if (short && long) out[short] = long;
  }
  return out;
}

export const ABBREVIATIONS: Record<string, string> = table(PAIRS);

export const DEVICE_ABBREVIATIONS: Record<string, string> = table(
  'cns connections|cu configuration_url|ids identifiers|name name|mf manufacturer|mdl model|mdl_id model_id|' +
    'hw hw_version|sw sw_version|sa suggested_area|sn serial_number|via_device via_device',
);

export const ORIGIN_ABBREVIATIONS: Record<string, string> = table('name name|sw sw_version|url support_url');

function expandKeys(obj: Record<string, unknown>, abbr: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (k === '__proto__' || k === 'constructor' || k === 'prototype') continue;
    const long = abbr[k] ?? k;
    if (!(long in out) || k === long) out[long] = v;
  }
  return out;
}

/**
 * Expands abbreviations (also inside `device`, `origin` and `availability` entries) and
 * the `~` base topic: a topic value starting or ending with `~` gets the base substituted.
 */
export function expandConfig(raw: Record<string, unknown>): Record<string, unknown> {
  const cfg = expandKeys(raw, ABBREVIATIONS);
  if (isJsonObject(cfg.device)) cfg.device = expandKeys(cfg.device, DEVICE_ABBREVIATIONS);
  if (isJsonObject(cfg.origin)) cfg.origin = expandKeys(cfg.origin, ORIGIN_ABBREVIATIONS);
  if (Array.isArray(cfg.availability)) {
    cfg.availability = cfg.availability.filter(isJsonObject).map((a) => expandKeys(a, ABBREVIATIONS));
  }
  const base = typeof cfg['~'] === 'string' ? (cfg['~'] as string) : undefined;
  if (base !== undefined) {
    const sub = (v: unknown) =>
      typeof v === 'string' ? (v.startsWith('~') ? base + v.slice(1) : v.endsWith('~') ? v.slice(0, -1) + base : v) : v;
    for (const [k, v] of Object.entries(cfg)) if (k.endsWith('_topic') || k === 'topic') cfg[k] = sub(v);
    if (Array.isArray(cfg.availability))
      for (const a of cfg.availability as Record<string, unknown>[]) a.topic = sub(a.topic);
    delete cfg['~'];
  }
  return cfg;
}
