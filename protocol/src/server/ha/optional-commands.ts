import {
  HaEntityRegistryUpdate,
  HaExecuteScript,
  HaHistoryDuringPeriod,
  HaLogbookEventStream,
  HaLogbookGetEvents,
  HaRenderTemplate,
  HaSubscribeTrigger,
  HaValidateConfig,
  type HaTemplateUpdate,
  type HaTriggerEvent,
} from '../../ha/index.ts';
import { HaCommandError, type HaBackend } from './backend.ts';
import { ALREADY_ANSWERED, command, type HaCommandSession } from './command.ts';

/**
 * The commands a backend may lack (render_template, validate_config, history, logbook): each
 * answers HA's unknown_command when its backend method is missing, as HA does when the
 * integration behind it is not loaded.
 */

function need<P, K extends keyof HaBackend<P>>(session: HaCommandSession<P>, method: K): NonNullable<HaBackend<P>[K]> {
  const fn = session.backend[method];
  if (typeof fn !== 'function') throw new HaCommandError('unknown_command', 'Unknown command.');
  return (fn as (...args: unknown[]) => unknown).bind(session.backend) as NonNullable<HaBackend<P>[K]>;
}

/** An ISO 8601 date-time (HA's dt_util.parse_datetime; no zone = local) → epoch seconds, or null. */
export function parseHaTime(text: string | undefined): number | null {
  if (
    text === undefined ||
    !/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/i.test(text.trim())
  )
    return null;
  const ms = Date.parse(text.trim().replace(' ', 'T'));
  return Number.isFinite(ms) ? ms / 1000 : null;
}

/** start_time / end_time as HA's history and logbook commands check them. */
function period(msg: { start_time: string; end_time?: string }): { start: number; end?: number } {
  const start = parseHaTime(msg.start_time);
  if (start === null) throw new HaCommandError('invalid_start_time', 'Invalid start_time');
  if (msg.end_time === undefined) return { start };
  const end = parseHaTime(msg.end_time);
  if (end === null) throw new HaCommandError('invalid_end_time', 'Invalid end_time');
  return { start, end };
}

/**
 * Starts a subscription whose first events may come before it is registered: HA answers the
 * result first, then the events; what arrives meanwhile is held and sent after the result.
 */
async function subscribeThenAnswer<P, E>(
  session: HaCommandSession<P>,
  id: number,
  start: (emit: (event: E) => void) => Promise<() => void>,
): Promise<typeof ALREADY_ANSWERED> {
  let held: E[] | null = [];
  const unsubscribe = await start((event) => {
    if (held) held.push(event);
    else session.sendEvent(id, event);
  });
  session.addSubscription(id, unsubscribe);
  session.sendResult(id, null);
  const pending = held;
  held = null;
  for (const event of pending) session.sendEvent(id, event);
  return ALREADY_ANSWERED;
}

export const optionalCommands = {
  render_template: command(HaRenderTemplate, (session, msg) => {
    const subscribe = need(session, 'subscribeTemplate');
    return subscribeThenAnswer<unknown, HaTemplateUpdate>(session, msg.id, (emit) =>
      subscribe(
        session.principal,
        {
          template: msg.template,
          variables: msg.variables,
          timeout: msg.timeout,
          strict: msg.strict,
          report_errors: msg.report_errors,
        },
        emit,
      ),
    );
  }),

  subscribe_trigger: command(HaSubscribeTrigger, (session, msg) => {
    const subscribe = need(session, 'subscribeTrigger');
    if (msg.trigger === undefined)
      throw new HaCommandError('invalid_format', "required key not provided @ data['trigger']");
    return subscribeThenAnswer<unknown, HaTriggerEvent>(session, msg.id, (emit) =>
      subscribe(session.principal, msg.trigger, msg.variables ?? {}, emit),
    );
  }),

  execute_script: command(HaExecuteScript, (session, msg) => {
    const execute = need(session, 'executeScript');
    if (msg.sequence === undefined)
      throw new HaCommandError('invalid_format', "required key not provided @ data['sequence']");
    return execute(session.principal, msg.sequence, msg.variables ?? {});
  }),

  validate_config: command(HaValidateConfig, async (session, msg) => {
    const validate = need(session, 'validateConfig');
    const out: Record<string, { valid: boolean; error: string | null }> = {};
    // HA 2024.10+ accepts the plural keys too and answers under the key it was given
    for (const [key, kind] of [
      ['trigger', 'trigger'],
      ['triggers', 'trigger'],
      ['condition', 'condition'],
      ['conditions', 'condition'],
      ['action', 'action'],
      ['actions', 'action'],
    ] as const) {
      const config = msg[key];
      if (config === undefined) continue;
      const error = await validate(session.principal, kind, config);
      out[key] = { valid: error === null, error };
    }
    return out;
  }),

  // HA answers {entity_entry} (plus require_restart/reload_delay when enabling: an edge needs neither)
  'config/entity_registry/update': command(HaEntityRegistryUpdate, async (session, msg) => {
    const update = need(session, 'updateEntityRegistry');
    const { id: _id, type: _type, entity_id: entityId, ...changes } = msg;
    return { entity_entry: await update(session.principal, entityId, changes) };
  }),

  'history/history_during_period': command(HaHistoryDuringPeriod, async (session, msg) => {
    const history = need(session, 'history');
    const { start, end } = period(msg);
    // a period that starts in the future has no history (HA answers {})
    if (start * 1000 > Date.now()) return {};
    return history(session.principal, {
      format: 'websocket',
      start,
      end,
      entity_ids: msg.entity_ids,
      include_start_time_state: msg.include_start_time_state,
      significant_changes_only: msg.significant_changes_only,
      minimal_response: msg.minimal_response,
      no_attributes: msg.no_attributes,
    });
  }),

  'logbook/get_events': command(HaLogbookGetEvents, async (session, msg) => {
    const logbook = need(session, 'logbook');
    const { start, end } = period(msg);
    if (start * 1000 > Date.now()) return [];
    return logbook(session.principal, { format: 'websocket', start, end, entity_ids: msg.entity_ids });
  }),

  'logbook/event_stream': command(HaLogbookEventStream, async (session, msg) => {
    const subscribe = need(session, 'subscribeLogbook');
    const { start, end } = period(msg);
    if (end !== undefined && end < start) throw new HaCommandError('invalid_end_time', 'Invalid end_time');
    return subscribeThenAnswer(session, msg.id, (emit) =>
      subscribe(session.principal, { start, end, entity_ids: msg.entity_ids }, emit),
    );
  }),
};
