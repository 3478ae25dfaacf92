/** A card of a stored ui-dashboard view (Home Assistant's Lovelace shapes); its `type` picks the view. */
export type Card = Record<string, unknown>;
