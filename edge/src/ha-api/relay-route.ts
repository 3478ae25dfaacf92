import { edgeHaRelayRoute, type HaRelayBody } from '@smarthome/protocol/ha/index';
import type { SpecRouter } from '@smarthome/protocol/server';
import { HaCommandError, HaRawJson } from '@smarthome/protocol/server/ha/index';
import type { Caller } from '../api/app.ts';
import type { EdgeHaBackend, EdgeHaPrincipal } from './backend.ts';
import type { CloudTriggers } from './cloud-triggers.ts';

/**
 * A relayed answer must fit in one tunnel message (16 MiB, with the envelope): a larger history
 * is refused with a message saying what to narrow, instead of a tunnel that drops the answer.
 */
export const MAX_RELAYED_JSON = 12 * 1024 * 1024;

/** the cloud (or a local token holder) has been authorized already: the backend ignores the principal */
const RELAYED: EdgeHaPrincipal = { tokenId: 0, token: '' };

/**
 * `POST /v1/ha/relay`: the HA operations the cloud relays to this edge, answered by the same
 * EdgeHaBackend as the edge's own /api/websocket and /api/*, in HA's result envelope.
 */
export function mountHaRelay(router: SpecRouter<Caller>, backend: EdgeHaBackend, triggers: CloudTriggers): void {
  router.add(edgeHaRelayRoute, async ({ c, body, auth }) => {
    try {
      const result =
        body.op === 'subscribe_trigger' || body.op === 'unsubscribe_trigger'
          ? cloudTrigger(triggers, auth, body)
          : await run(backend, body);
      const json = result instanceof HaRawJson ? result.json : JSON.stringify(result ?? null);
      if (json.length > MAX_RELAYED_JSON)
        throw new HaCommandError(
          'home_assistant_error',
          'The answer is too large to relay through the cloud: ask for a shorter period or fewer entities.',
        );
      return c.body(`{"success":true,"result":${json}}`, 200, { 'content-type': 'application/json; charset=utf-8' });
    } catch (err) {
      if (!(err instanceof HaCommandError)) throw err;
      return { success: false as const, error: { code: err.code, message: err.message } };
    }
  });
}

type TriggerOp = Extract<HaRelayBody, { op: 'subscribe_trigger' | 'unsubscribe_trigger' }>;

/** Trigger subscriptions send their events into the tunnel: only the cloud (through it) may make them. */
function cloudTrigger(triggers: CloudTriggers, auth: Caller, body: TriggerOp): unknown {
  if (auth.kind !== 'trusted' || auth.via !== 'cloud')
    throw new HaCommandError('unauthorized', 'Trigger subscriptions are made by the cloud, through the tunnel.');
  if (body.op === 'unsubscribe_trigger') return triggers.unsubscribe(body.subscription);
  if (body.trigger === undefined)
    throw new HaCommandError('invalid_format', "required key not provided @ data['trigger']");
  triggers.subscribe(body.subscription, body.trigger, body.variables);
  return null;
}

async function run(backend: EdgeHaBackend, body: Exclude<HaRelayBody, TriggerOp>): Promise<unknown> {
  switch (body.op) {
    case 'history':
      if (!backend.history) throw new HaCommandError('unknown_command', 'The recorder is off on this edge.');
      return backend.history(RELAYED, body.query);
    case 'logbook':
      if (!backend.logbook) throw new HaCommandError('unknown_command', 'The recorder is off on this edge.');
      return backend.logbook(RELAYED, body.query);
    case 'execute_script':
      if (body.sequence === undefined)
        throw new HaCommandError('invalid_format', "required key not provided @ data['sequence']");
      return backend.executeScript(RELAYED, body.sequence, body.variables);
    case 'validate_config':
      return backend.validateConfig(RELAYED, body.kind, body.config);
    case 'set_state':
      return backend.setState(RELAYED, body.entity_id, body.state, body.attributes, body.force_update);
    case 'remove_state':
      return backend.removeState(RELAYED, body.entity_id);
    case 'update_entity_registry':
      return backend.updateEntityRegistry(RELAYED, body.entity_id, body.changes);
  }
}
