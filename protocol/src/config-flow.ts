import { z } from 'zod';
import { JsonObject } from './common.ts';

export const DataSchemaField = z.object({
  name: z.string(),
  type: z.enum(['string', 'integer', 'float', 'boolean', 'select', 'password', 'url']),
  required: z.boolean().optional(),
  default: z.unknown().optional(),
  options: z.array(z.string()).optional(),
  /** shown under the field's label */
  description: z.string().optional(),
  /** integer and float fields: the range the step accepts (out_of_range otherwise) */
  min: z.number().optional(),
  max: z.number().optional(),
});
export const StartFlowBody = z
  .object({
    handler: z.string().min(1).max(100),
    edge_id: z.number().int().positive().optional(),
  })
  .meta({ id: 'StartConfigFlow' });
/** Step input: step-specific string fields; the OAuth 2.0 code step uses `code` and `state`. */
export const AdvanceFlowBody = JsonObject.meta({ id: 'AdvanceConfigFlow' });

const base = { flowId: z.string(), handler: z.string() };
export const FlowForm = z.object({
  type: z.literal('form'),
  ...base,
  stepId: z.string(),
  data_schema: z.array(DataSchemaField),
  errors: z.record(z.string(), z.string()),
  description_placeholders: z.record(z.string(), z.string()).optional(),
});
export const FlowExternal = z.object({
  type: z.literal('external'),
  ...base,
  stepId: z.string(),
  url: z.string(),
  data_schema: z.array(DataSchemaField),
  errors: z.record(z.string(), z.string()),
});
export const FlowCreateEntry = z.object({
  type: z.literal('create_entry'),
  ...base,
  stepId: z.literal('done'),
  title: z.string(),
  result: z.object({ config_entry_id: z.number().int() }),
});
export const FlowAbort = z.object({ type: z.literal('abort'), ...base, reason: z.string() });
export const ConfigFlowResult = z
  .discriminatedUnion('type', [FlowForm, FlowExternal, FlowCreateEntry, FlowAbort])
  .meta({ id: 'ConfigFlowResult' });
export const FlowHandler = z.object({ domain: z.string(), name: z.string() });
export const FlowHandlers = z.array(FlowHandler).meta({ id: 'ConfigFlowHandlers' });
export type ConfigFlowResult = z.infer<typeof ConfigFlowResult>;
export type DataSchemaField = z.infer<typeof DataSchemaField>;
