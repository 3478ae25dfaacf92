import { useEffect, useState } from 'preact/hooks';
import { z } from 'zod';
import { Device, DeviceWithEntities } from '@smarthome/protocol/devices';
import { api, describe } from '../api/http.ts';
import { useApp } from '../app/context.ts';
import { onLink } from '../app/router.ts';
import { EntityControl } from '../dashboards/entity.tsx';
import { displayName, useLive } from '../live/states.ts';
import { VoiceExposure } from './VoiceExposure.tsx';
import { Alert } from '../app/Alert.tsx';

type DeviceT = z.infer<typeof Device>;

function Search({ value, onChange, label }: { value: string; onChange: (v: string) => void; label: string }) {
  return (
    <label class="search">
      {label}
      <input type="search" value={value} onInput={(e) => onChange((e.currentTarget as HTMLInputElement).value)} />
    </label>
  );
}

export function DevicesPage() {
  const [devices, setDevices] = useState<DeviceT[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [q, setQ] = useState('');
  useEffect(() => {
    api('GET', '/v1/devices', { schema: z.array(Device) }).then(setDevices, (e: unknown) => setError(describe(e)));
  }, []);
  const shown = (devices ?? []).filter((d) =>
    `${d.name} ${d.manufacturer ?? ''} ${d.model ?? ''}`.toLowerCase().includes(q.toLowerCase()),
  );
  return (
    <div>
      <h1>Devices</h1>
      <Search label="Search devices" value={q} onChange={setQ} />
      <Alert message={error} />
      {!devices && !error && (
        <p class="note" role="status">
          Loading devices…
        </p>
      )}
      <ul class="rows">
        {shown.map((d) => (
          <li key={`${d.edge_id ?? 0}-${d.id}`}>
            <a href={`/devices/${d.id}`} onClick={onLink}>
              {d.name}
            </a>
            <span class="note">{[d.manufacturer, d.model].filter(Boolean).join(' · ')}</span>
          </li>
        ))}
      </ul>
      {devices && shown.length === 0 && <p class="note">No devices match.</p>}
    </div>
  );
}

export function DevicePage({ id }: { id: number }) {
  const { kind } = useApp();
  const [data, setData] = useState<z.infer<typeof DeviceWithEntities> | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api('GET', `/v1/devices/${id}`, { schema: DeviceWithEntities }).then(setData, (e: unknown) =>
      setError(describe(e)),
    );
  }, [id]);
  if (error)
    return (
      <p class="error" role="alert">
        {error}
      </p>
    );
  if (!data)
    return (
      <p class="note" role="status">
        Loading device…
      </p>
    );
  return (
    <div>
      <h1>{data.device.name}</h1>
      <p class="note">
        {[data.device.manufacturer, data.device.model, data.device.sw_version].filter(Boolean).join(' · ')}
      </p>
      <section class="card">
        <h2>Entities</h2>
        {data.entities.map((e) => (
          <EntityControl key={e.entity_id} entityId={e.entity_id} />
        ))}
      </section>
      {kind === 'cloud' && <VoiceExposure entityIds={data.entities.map((e) => e.entity_id)} />}
    </div>
  );
}

export function EntitiesPage() {
  const { live } = useApp();
  useLive(live);
  const [q, setQ] = useState('');
  const all = [...live.states.values()].sort((a, b) => a.entity_id.localeCompare(b.entity_id));
  const shown = all.filter((s) => `${s.entity_id} ${displayName(s)}`.toLowerCase().includes(q.toLowerCase()));
  return (
    <div>
      <h1>Entities</h1>
      <Search label="Search entities" value={q} onChange={setQ} />
      {live.status === 'connecting' && all.length === 0 && (
        <p class="note" role="status">
          Loading states…
        </p>
      )}
      <section class="card">
        {shown.slice(0, 500).map((s) => (
          <EntityControl key={s.entity_id} entityId={s.entity_id} />
        ))}
        {shown.length > 500 && <p class="note">{shown.length - 500} more: narrow the search.</p>}
        {shown.length === 0 && <p class="note">No entities match.</p>}
      </section>
    </div>
  );
}
