/** Domain rules of HA's recorder and history that both the queries and the wire shapes apply. */

/** Domains whose attribute-only changes count as significant (HA's SIGNIFICANT_DOMAINS). */
export const SIGNIFICANT_DOMAINS: ReadonlySet<string> = new Set([
  'climate',
  'device_tracker',
  'humidifier',
  'thermostat',
  'water_heater',
]);

/** Domains whose minimal_response keeps full states (HA's NEED_ATTRIBUTE_DOMAINS). */
export const NEED_ATTRIBUTE_DOMAINS: ReadonlySet<string> = new Set([
  'climate',
  'humidifier',
  'input_datetime',
  'thermostat',
  'water_heater',
]);

export const domainOf = (entityId: string) => entityId.slice(0, entityId.indexOf('.'));
