import { useEffect, useState } from 'preact/hooks';
import { PutVoiceEndpointBody, VoiceEndpoint, VoiceEndpointList } from '@smarthome/protocol/integrations';
import type { z } from 'zod';
import { api, describe } from '../api/http.ts';
import { Alert } from '../app/Alert.tsx';

type Endpoint = z.infer<typeof VoiceEndpoint>;

/**
 * The cloud's voice-assistant exposure of a device's entities (`GET`/`PUT
 * /v1/voice-assistant/endpoints`): one switch per entity the assistants can be given.
 */
export function VoiceExposure({ entityIds }: { entityIds: string[] }) {
  const [endpoints, setEndpoints] = useState<Map<string, Endpoint> | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  useEffect(() => {
    api('GET', '/v1/voice-assistant/endpoints', { schema: VoiceEndpointList }).then(
      (list) => setEndpoints(new Map(list.map((e) => [e.entity_id, e]))),
      (e: unknown) => setError(describe(e)),
    );
  }, []);
  const shown = entityIds.filter((id) => endpoints?.has(id));
  const toggle = async (entityId: string, exposed: boolean) => {
    setBusy(entityId);
    setError(null);
    try {
      const saved = await api('PUT', `/v1/voice-assistant/endpoints/${encodeURIComponent(entityId)}`, {
        body: PutVoiceEndpointBody.parse({ exposed }),
        schema: VoiceEndpoint,
      });
      setEndpoints((m) => new Map(m).set(entityId, saved));
    } catch (e) {
      setError(describe(e));
    } finally {
      setBusy(null);
    }
  };
  return (
    <section class="card">
      <h2>Voice assistants</h2>
      <Alert message={error} />
      {!endpoints && !error && (
        <p class="note" role="status">
          Loading…
        </p>
      )}
      {endpoints && shown.length === 0 && (
        <p class="note">No entity of this device can be given to voice assistants.</p>
      )}
      {shown.map((id) => {
        const e = endpoints!.get(id)!;
        return (
          <label key={id} class="switch-row">
            <input
              type="checkbox"
              checked={e.exposed}
              disabled={busy === id}
              onChange={(ev) => void toggle(id, (ev.currentTarget as HTMLInputElement).checked)}
            />{' '}
            Expose {e.name} ({id}) to voice assistants
          </label>
        );
      })}
    </section>
  );
}
