import { z } from 'zod';
import { tunnel } from '@smarthome/protocol';
import { describeZodError } from '@smarthome/protocol/server';
import type { LoopSlices } from './slices.ts';

/**
 * The protocol's snapshot message with its lists' items not yet checked: the connection checks
 * this much when the message arrives, validateSnapshot the items later, in slices. Derived from
 * tunnel.SnapshotMessage, so the wire shape stays the protocol's.
 */
export const SnapshotEnvelope = tunnel.SnapshotMessage.extend({
  data: z.object({
    devices: z.array(z.unknown()),
    entities: z.array(z.unknown()),
    states: z.array(z.unknown()),
    config_entries: z.array(z.unknown()),
    automations: z.array(z.unknown()),
    areas: z.array(z.unknown()).optional(),
  }),
});
export type SnapshotEnvelope = z.infer<typeof SnapshotEnvelope>;

/** What an edge's tunnel hands the hub: a snapshot's items are checked there, off the receive path. */
export type TunnelMessage = Exclude<tunnel.EdgeToCloud, { type: 'snapshot' }> | SnapshotEnvelope;

/** items validated in one slice (a 10k-entity snapshot took tens of ms at once) */
const ITEMS_PER_SLICE = 250;

/** an item failed: its issues, with paths from the message's root as the whole schema would give them */
class InvalidItem extends Error {
  readonly issues: z.core.$ZodIssue[];
  constructor(issues: z.core.$ZodIssue[]) {
    super('invalid snapshot item');
    this.issues = issues;
  }
}

/**
 * Validates `list` slice by slice, replacing each item by its parsed value in place: a snapshot
 * waiting for its turn to be stored is held once, not as raw and parsed copies.
 */
async function items<S extends z.ZodType>(
  key: string,
  list: unknown[],
  schema: S,
  slices: LoopSlices,
): Promise<z.output<S>[]> {
  for (let i = 0; i < list.length; i += ITEMS_PER_SLICE) {
    await slices.run(() => {
      for (let j = i; j < Math.min(i + ITEMS_PER_SLICE, list.length); j++) {
        const checked = schema.safeParse(list[j]);
        if (!checked.success)
          throw new InvalidItem(
            checked.error.issues.map((issue) => ({ ...issue, path: ['data', key, j, ...issue.path] })),
          );
        list[j] = checked.data;
      }
    });
  }
  return list as z.output<S>[];
}

const shape = tunnel.Snapshot.shape;

/**
 * Checks a snapshot's items against the protocol's schemas in slices (LoopSlices: shared with the
 * other edges' work, a bounded amount per turn of the event loop); resolves to the snapshot, or to
 * the error text the whole schema gives for it.
 */
export async function validateSnapshot(
  msg: SnapshotEnvelope,
  slices: LoopSlices,
): Promise<{ data: tunnel.Snapshot } | { error: string }> {
  try {
    const { data } = msg;
    return {
      data: {
        devices: await items('devices', data.devices, shape.devices.element, slices),
        entities: await items('entities', data.entities, shape.entities.element, slices),
        states: await items('states', data.states, shape.states.element, slices),
        config_entries: await items('config_entries', data.config_entries, shape.config_entries.element, slices),
        automations: await items('automations', data.automations, shape.automations.element, slices),
        ...(data.areas ? { areas: await items('areas', data.areas, shape.areas.unwrap().element, slices) } : {}),
      },
    };
  } catch (err) {
    if (!(err instanceof InvalidItem)) throw err;
    return { error: describeZodError(new z.ZodError(err.issues)) };
  }
}
