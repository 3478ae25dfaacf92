import type { AutomationBody } from '@smarthome/protocol';
import { EdgeError } from '../errors.ts';
import { AutomationTemplates } from './template.ts';
import { durationMs } from './time.ts';
import { armTrigger, type TriggerEnv } from './triggers.ts';

/** A definition the engine refuses (400) or an unknown automation (404); onError answers it. */
export class AutomationError extends EdgeError {
  constructor(kind: 'invalid_input' | 'not_found', message: string) {
    super(kind, message);
    this.name = 'AutomationError';
  }
}

/**
 * Checks what the schema cannot: templates parse, delays are durations, and every trigger
 * arms (its patterns are valid, the broker or bus it needs is there). Throws AutomationError.
 */
export function validateAutomation(body: AutomationBody, env: TriggerEnv): void {
  const walk = (v: unknown, path: string): void => {
    if (
      path.endsWith('.delay') &&
      (typeof v === 'number' || (typeof v === 'string' && !AutomationTemplates.isTemplate(v)))
    ) {
      try {
        durationMs(v);
      } catch (err) {
        throw new AutomationError('invalid_input', `${path}: ${(err as Error).message}`);
      }
    }
    if (typeof v === 'string' && AutomationTemplates.isTemplate(v)) {
      try {
        env.templates.validate(v);
      } catch (err) {
        throw new AutomationError('invalid_input', `${path}: ${(err as Error).message}`);
      }
    } else if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${path}[${i}]`));
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, path ? `${path}.${k}` : k);
  };
  walk({ variables: body.variables, trigger: body.trigger, condition: body.condition, action: body.action }, '');
  body.trigger.forEach((t, i) => {
    if (t.platform === 'mqtt' && !env.mqtt)
      throw new AutomationError('invalid_input', `trigger[${i}]: mqtt triggers need the MQTT broker`);
    if (t.platform === 'event' && !env.events)
      throw new AutomationError('invalid_input', `trigger[${i}]: event triggers need the event bus`);
    if (t.platform === 'device' && !env.events)
      throw new AutomationError('invalid_input', `trigger[${i}]: device triggers need the event bus`);
    // armed against inert ports and disarmed at once: what arming refuses is refused here
    try {
      const off = armTrigger(
        t,
        i,
        {
          ...env,
          states: { get: () => undefined, all: () => [], onStateChanged: () => () => {} },
          mqtt: { subscribe: () => () => {} },
          events: { fire() {}, on: () => () => {} },
          forTimers: undefined,
        },
        () => {},
      );
      off.disarm();
    } catch (err) {
      throw new AutomationError('invalid_input', `trigger[${i}]: ${(err as Error).message}`);
    }
  });
}
