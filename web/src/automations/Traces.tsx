import type { Trace } from '@smarthome/protocol/automations';
import { formatTime } from './List.tsx';

const json = (v: unknown) => JSON.stringify(v, null, 2);

/** Each run of an automation, newest first; a run opens to its trigger variables and its steps in order. */
export function TraceList({ runs }: { runs: Trace[] }) {
  if (runs.length === 0) return <p class="note">No runs yet.</p>;
  return (
    <ol class="runs">
      {runs.map((t) => (
        <li key={t.run_id}>
          <details>
            <summary>
              <time dateTime={t.started_at}>{formatTime(t.started_at)}</time> ·{' '}
              <span class={t.state === 'failed' || t.state === 'aborted' ? 'error' : undefined}>{t.state}</span>
              {t.error ? ` · ${t.error}` : ''} · {t.steps.length} {t.steps.length === 1 ? 'step' : 'steps'}
            </summary>
            <h3>Trigger variables</h3>
            <pre class="code-block">{json(t.trigger)}</pre>
            <h3>Steps</h3>
            {t.steps.length === 0 ? (
              <p class="note">No step ran.</p>
            ) : (
              <ol class="steps">
                {t.steps.map((s, i) => (
                  <li key={i}>
                    <code>{s.path}</code>{' '}
                    <span class="note">
                      {formatTime(s.started_at)} · {s.duration_ms} ms
                    </span>
                    {s.error && <p class="error">Error: {s.error}</p>}
                    {s.result !== undefined && <pre class="code-block">{json(s.result)}</pre>}
                  </li>
                ))}
              </ol>
            )}
          </details>
        </li>
      ))}
    </ol>
  );
}
