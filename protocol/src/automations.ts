import { z } from 'zod';
import { JsonObject, NonEmpty, Timestamp } from './common.ts';
import { listOf } from './automation-values.ts';
import { Trigger } from './automation-triggers.ts';
import { Condition } from './automation-conditions.ts';
import { Action } from './automation-actions.ts';
import { normalizeAutomationInput } from './automation-normalize.ts';

/**
 * Automation shapes (Home Assistant's model). Input is normalized first
 * (`normalizeAutomationInput`, automation-normalize.ts), so pasted HA automations in the newer
 * spelling work too. Triggers, conditions and actions have a module each.
 */

/**
 * Literal values the owner marks secret (a token in a URL path, a lock code in service data):
 * organization members who may view but not edit the automation see them replaced, wherever
 * they appear in the definition and its traces. The automation itself runs with them as written.
 */
export const Secrets = z.array(z.string().min(1).max(4096)).max(100).meta({
  id: 'AutomationSecrets',
  description:
    'values hidden from organization members who may view but not edit (replaced by "**redacted**" wherever they appear); call_url header values, URL passwords and query parameters and body fields with secret-looking names are hidden without being listed',
});

export const AutomationMode = z.enum(['single', 'restart', 'queued', 'parallel']);
export type AutomationMode = z.infer<typeof AutomationMode>;

export const AutomationBody = z
  .preprocess(
    normalizeAutomationInput,
    z.object({
      edge_id: z.number().int().positive().optional(),
      alias: NonEmpty(200),
      description: z.string().max(2000).optional(),
      mode: AutomationMode.default('single'),
      max: z.number().int().min(1).max(100).optional(),
      max_exceeded: z.enum(['silent', 'warning']).optional(),
      variables: JsonObject.optional().meta({
        description:
          'HA automation variables: rendered once per run, in order, after the trigger and before the conditions; `trigger` and trigger variables are available',
      }),
      secrets: Secrets.optional(),
      trigger: listOf(Trigger, 100).refine((v) => v.length > 0, 'at least one trigger'),
      condition: listOf(Condition, 100).default([]),
      action: listOf(Action),
      enabled: z.boolean().default(true),
    }),
  )
  .meta({
    id: 'AutomationWrite',
    description:
      "also accepts HA's triggers/conditions/actions, `trigger:` for `platform:` and `action:` for `service:`",
  });
export type AutomationBody = z.infer<typeof AutomationBody>;
export const Automation = z
  .object({
    id: z.string(),
    edge_id: z.number().int().nullable(),
    alias: z.string(),
    description: z.string().nullable(),
    mode: AutomationMode,
    max: z.number().int().nullable(),
    /** present only when the automation defines variables */
    variables: JsonObject.optional(),
    /** present only when the owner marked values secret */
    secrets: Secrets.optional(),
    trigger: z.array(Trigger),
    condition: z.array(Condition),
    action: z.array(Action),
    enabled: z.boolean(),
    webhook_id: z.string().nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Automation' });
export type Automation = z.infer<typeof Automation>;
export const AutomationSummary = Automation.pick({
  id: true,
  edge_id: true,
  alias: true,
  enabled: true,
  mode: true,
  webhook_id: true,
}).meta({ id: 'AutomationSummary' });

export const TraceStep = z.object({
  path: z.string(),
  started_at: Timestamp,
  duration_ms: z.number(),
  result: z.unknown().optional(),
  error: z.string().optional(),
});
export type TraceStep = z.infer<typeof TraceStep>;
export const TraceState = z.enum(['running', 'stopped', 'finished', 'failed', 'aborted']);
export const Trace = z
  .object({
    run_id: z.string(),
    automation_id: z.string(),
    started_at: Timestamp,
    finished_at: Timestamp.nullable(),
    state: TraceState,
    trigger: JsonObject,
    steps: z.array(TraceStep),
    error: z.string().nullable(),
  })
  .meta({ id: 'AutomationTrace' });
export type Trace = z.infer<typeof Trace>;
export const CloudBootstrap = z
  .object({ organization_id: z.string().nullable(), automations: z.array(Automation) })
  .meta({ id: 'AutomationCloudBootstrap' });
/** Path of the webhook receiver: the webhook_id is the secret. */
export const WebhookParams = z.object({ webhook_id: z.string().regex(/^[A-Za-z0-9_-]{1,200}$/) });
