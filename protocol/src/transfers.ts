import { z } from 'zod';
import { Email, JsonObject, NonEmpty, Timestamp } from './common.ts';

export const TransferResourceType = z.enum([
  'physical_device',
  'user_product',
  'config_entry',
  'automation',
  'ui_dashboard',
  'script',
  'tag',
  'zone',
  'organization',
]);
export const TransferStatus = z.enum(['pending', 'accepted', 'declined', 'cancelled', 'expired']);
export const CreateTransferBody = z
  .object({
    to_email: Email,
    resource_type: TransferResourceType,
    resource_id: NonEmpty(256),
    metadata: JsonObject.nullable().optional(),
  })
  .meta({ id: 'CreateTransfer' });
export const Transfer = z
  .object({
    id: z.number().int(),
    from_user_id: z.string(),
    to_email: z.string(),
    resource_type: TransferResourceType,
    resource_id: z.string(),
    status: TransferStatus,
    metadata: JsonObject.nullable(),
    created_at: Timestamp,
    expires_at: Timestamp,
    responded_at: Timestamp.nullable(),
    direction: z.enum(['sent', 'received']).meta({ description: 'relative to the caller' }),
  })
  .meta({ id: 'Transfer' });
/** GET /v1/transfers: the caller's sent and received transfers, newest first. */
export const TransferList = z.array(Transfer).meta({ id: 'TransferList' });
export type Transfer = z.infer<typeof Transfer>;
export type TransferResourceType = z.infer<typeof TransferResourceType>;
