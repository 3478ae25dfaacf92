import { useEffect, useState } from 'preact/hooks';
import type { z } from 'zod';
import type { AutomationSummary, Trace } from '@smarthome/protocol/automations';
import { describe } from '../api/http.ts';
import { onLink } from '../app/router.ts';
import { listAutomations, setEnabled, traces } from './api.ts';
import { Alert } from '../app/Alert.tsx';

type Summary = z.infer<typeof AutomationSummary>;
/** undefined: still loading; null: could not be read (e.g. the edge is offline). */
type LastRun = Trace | 'never' | null | undefined;

export function formatTime(iso: string): string {
  return new Date(iso).toLocaleString();
}

function LastRunCell({ run }: { run: LastRun }) {
  if (run === undefined) return <span class="note">Last run: …</span>;
  if (run === null) return <span class="note">Last run: unknown</span>;
  if (run === 'never') return <span class="note">Never run</span>;
  return (
    <span class="note">
      Last run: <time dateTime={run.started_at}>{formatTime(run.started_at)}</time> ·{' '}
      <span class={run.state === 'failed' || run.state === 'aborted' ? 'error' : undefined}>{run.state}</span>
      {run.error ? ` (${run.error})` : ''}
    </span>
  );
}

function Row({ a, onChanged }: { a: Summary; onChanged: (a: Summary) => void }) {
  const [run, setRun] = useState<LastRun>(undefined);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    // the list (the cloud's mirror) has no run times: the newest trace is the last run
    traces(a.id).then(
      (t) => setRun(t[0] ?? 'never'),
      () => setRun(null),
    );
  }, [a.id]);
  const toggle = async () => {
    setBusy(true);
    setError(null);
    try {
      const saved = await setEnabled(a.id, !a.enabled);
      onChanged({ ...a, enabled: saved.enabled });
    } catch (e) {
      setError(describe(e));
    } finally {
      setBusy(false);
    }
  };
  const errorId = `automation-${a.id}-error`;
  return (
    <li>
      <a href={`/automations/${encodeURIComponent(a.id)}`} onClick={onLink}>
        {a.alias}
      </a>
      <LastRunCell run={run} />
      <button
        type="button"
        role="switch"
        class="switch"
        aria-checked={a.enabled}
        aria-label={`${a.alias}: ${a.enabled ? 'enabled' : 'disabled'}`}
        aria-describedby={error ? errorId : undefined}
        disabled={busy}
        onClick={() => void toggle()}
      >
        <span class="knob" />
      </button>
      {error && (
        <span id={errorId} class="error" role="alert">
          {error}
        </span>
      )}
    </li>
  );
}

export function AutomationsList() {
  const [list, setList] = useState<Summary[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    listAutomations().then(setList, (e: unknown) => setError(describe(e)));
  }, []);
  return (
    <div class="automations">
      <div class="title-row">
        <h1>Automations</h1>
        <a class="button-link" href="/automations/new" onClick={onLink}>
          New automation
        </a>
      </div>
      <Alert message={error} />
      {!list && !error && (
        <p class="note" role="status">
          Loading automations…
        </p>
      )}
      <ul class="rows">
        {(list ?? []).map((a) => (
          <Row
            key={`${a.edge_id ?? 0}-${a.id}`}
            a={a}
            onChanged={(changed) => setList((l) => (l ?? []).map((x) => (x.id === changed.id ? changed : x)))}
          />
        ))}
      </ul>
      {list && list.length === 0 && <p class="note">No automations yet.</p>}
    </div>
  );
}
