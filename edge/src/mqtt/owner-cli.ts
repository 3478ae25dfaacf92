import { existsSync } from 'node:fs';
import type { MqttOwnership } from '@smarthome/protocol/edge-local';
import { LocalTokenStore } from '../auth/tokens.ts';
import type { MqttOwnerAction } from '../cli.ts';
import { EdgeDatabase } from '../db/database.ts';

export interface CliOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** One line per discovery config: topic, owner ("-" when released), device id ("-" when none), entity ids. */
export function formatOwnership(o: MqttOwnership): string {
  return [o.discovery_topic, o.owner ?? '-', o.device_id ?? '-', o.entity_ids.join(',')].join('\t');
}

/**
 * `pnpm edge mqtt-owner …`: ownership lives in the running edge's memory (its broker ACL), so
 * the CLI asks that edge through its local API rather than writing the database behind its
 * back. It authenticates with a local token it creates in the data dir and revokes at once
 * (reaching the database proves the right to, as for `pnpm edge token create`). Exit code 0, or
 * 1 with one `error: …` line.
 */
export async function runMqttOwnerCommand(
  command: { dataDir: string; port: number; action: MqttOwnerAction },
  out: CliOutput,
): Promise<number> {
  const database = new EdgeDatabase(command.dataDir);
  if (!existsSync(database.file)) {
    out.stderr(`error: no edge database in ${command.dataDir} (pass the running edge's --data-dir)\n`);
    return 1;
  }
  database.open();
  const tokens = new LocalTokenStore(database);
  const { token, id } = tokens.create('mqtt-owner (cli, revoked after use)');
  try {
    const { action } = command;
    const init: RequestInit =
      action.kind === 'list'
        ? { method: 'GET' }
        : { method: 'PUT', body: JSON.stringify({ ...action.target, username: action.username }) };
    let res: Response;
    try {
      res = await fetch(`http://127.0.0.1:${command.port}/v1/mqtt/owners`, {
        ...init,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        signal: AbortSignal.timeout(15_000),
      });
    } catch {
      out.stderr(`error: no edge answers on 127.0.0.1:${command.port} (start it, or pass its --port)\n`);
      return 1;
    }
    const body = (await res.json().catch(() => null)) as { message?: string; error?: string } | MqttOwnership[] | null;
    if (res.status === 401) {
      out.stderr(
        `error: the edge on port ${command.port} does not use the data dir ${command.dataDir} (pass its --data-dir)\n`,
      );
      return 1;
    }
    if (!res.ok || !Array.isArray(body)) {
      const reason = body && !Array.isArray(body) ? (body.message ?? body.error) : undefined;
      out.stderr(`error: ${reason ?? `the edge answered ${res.status}`}\n`);
      return 1;
    }
    for (const o of body) out.stdout(formatOwnership(o) + '\n');
    if (action.kind === 'set') {
      const topics = body.map((o) => o.discovery_topic).join(', ');
      out.stderr(`${topics} ${action.username === null ? 'released' : `now owned by ${action.username}`}\n`);
    }
    return 0;
  } finally {
    tokens.revoke(id);
    database.close();
  }
}
