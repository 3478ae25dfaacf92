/**
 * MQTT integration: a config flow asking for the broker (host, port) and credentials,
 * checking them with a real CONNECT before creating the entry.
 */
import { isIP } from 'node:net';
import type { DataSchemaField } from '@smarthome/protocol';
import { errorFields } from '@smarthome/protocol/server';
import type { ConfigFlow, FlowContext, Integration, StepErrors, StepResult } from '../../config-flow/types.ts';
import { createConnectCheck, type ConnectCheck } from './connect-check.ts';

export { createConnectCheck, type ConnectCheck, type ConnectOutcome, type BrokerSettings } from './connect-check.ts';

export const MQTT_DOMAIN = 'mqtt';

export interface MqttIntegrationOptions {
  /** injectable for tests; default: a real CONNECT with a 5 s timeout */
  connectCheck?: ConnectCheck;
}

const HOSTNAME =
  /^(?=.{1,253}$)([a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)(\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*\.?$/;

export function isValidHost(host: string): boolean {
  if (isIP(host)) return true;
  if (host.startsWith('[') && host.endsWith(']')) return isIP(host.slice(1, -1)) === 6;
  return HOSTNAME.test(host);
}

export const brokerSchema: DataSchemaField[] = [
  { name: 'host', type: 'string', required: true, description: 'The broker’s host name or IP address' },
  { name: 'port', type: 'integer', required: true, default: 1883 },
  { name: 'username', type: 'string', required: false },
  { name: 'password', type: 'password', required: false, description: 'Needed only when the broker asks for one' },
];

class MqttFlow implements ConfigFlow {
  readonly firstStep = 'user';
  private readonly ctx: FlowContext;
  private readonly check: ConnectCheck;
  constructor(ctx: FlowContext, check: ConnectCheck) {
    this.ctx = ctx;
    this.check = check;
  }

  async step(stepId: string, input?: Record<string, unknown>): Promise<StepResult> {
    if (stepId !== 'user') return { type: 'abort', reason: 'unknown_step' };
    const form = (errors: StepErrors = {}): StepResult => ({
      type: 'form',
      stepId: 'user',
      data_schema: brokerSchema,
      errors,
    });
    if (!input) return form();

    const host = String(input.host);
    const port = Number(input.port);
    const username = typeof input.username === 'string' && input.username !== '' ? input.username : undefined;
    const password = typeof input.password === 'string' && input.password !== '' ? input.password : undefined;
    const errors: StepErrors = {};
    if (!isValidHost(host)) errors.host = 'invalid_host';
    if (!Number.isInteger(port) || port < 1 || port > 65535) errors.port = 'invalid_port';
    if (password !== undefined && username === undefined) errors.username = 'username_required';
    if (Object.keys(errors).length) return form(errors);

    const existing = await this.ctx.entries();
    if (existing.some((e) => e.data.host === host && e.data.port === port))
      return { type: 'abort', reason: 'already_configured' };

    let outcome;
    try {
      outcome = await this.check({ host, port, username, password });
    } catch (err) {
      this.ctx.log.warn(`mqtt: connect check to ${host}:${port} failed`, errorFields(err));
      outcome = 'cannot_connect' as const;
    }
    if (outcome !== 'ok') return form({ base: outcome });

    const data: Record<string, unknown> = { host, port };
    if (username !== undefined) data.username = username;
    if (password !== undefined) data.password = password;
    return { type: 'create_entry', title: `MQTT ${host}:${port}`, data };
  }
}

export function createMqttIntegration(options: MqttIntegrationOptions = {}): Integration {
  const check = options.connectCheck ?? createConnectCheck();
  return {
    domain: MQTT_DOMAIN,
    name: 'MQTT',
    createFlow: (ctx) => new MqttFlow(ctx, check),
    // The broker connection itself belongs to the edge core's MQTT bridge, which reads the entry data.
  };
}
