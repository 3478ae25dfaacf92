import { useEffect, useRef, useState } from 'preact/hooks';
import type { Automation, Trace } from '@smarthome/protocol/automations';
import { ApiError, describe } from '../api/http.ts';
import { navigate, onLink } from '../app/router.ts';
import { STARTER, create, editable, getAutomation, runNow, traces, update, webhookUrl } from './api.ts';
import { TextError, fromText, lineOfPath, splitPath, toText, type Mode } from './text.ts';
import { TraceList } from './Traces.tsx';
import { Alert } from '../app/Alert.tsx';

interface Problem {
  message: string;
  /** 1-based line of the text, or null when the message is about the whole definition */
  line: number | null;
}

/**
 * A textarea with line numbers. It grows with its text (no inner vertical scroll), so a line's
 * position is its number times the line height: the problem is shown right under its line.
 */
function CodeArea(props: { text: string; mode: Mode; problem: Problem | null; onInput: (t: string) => void }) {
  const { text, problem } = props;
  const lines = text.split('\n').length;
  return (
    <div class="code">
      <ol class="gutter" aria-hidden="true">
        {Array.from({ length: lines }, (_, i) => (
          <li key={i} class={problem?.line === i + 1 ? 'bad' : undefined}>
            {i + 1}
          </li>
        ))}
      </ol>
      <div class="code-area">
        <textarea
          id="automation-text"
          aria-label={`Automation (${props.mode === 'yaml' ? 'YAML' : 'JSON'})`}
          aria-invalid={problem ? true : undefined}
          aria-describedby={problem ? 'automation-problem' : undefined}
          wrap="off"
          spellcheck={false}
          autocapitalize="off"
          rows={lines + 1}
          value={text}
          onInput={(e) => props.onInput((e.currentTarget as HTMLTextAreaElement).value)}
        />
        {problem && (
          <p
            id="automation-problem"
            class={`line-problem error${problem.line === null ? ' whole' : ''}`}
            role="alert"
            data-line={problem.line ?? undefined}
            style={problem.line === null ? undefined : { top: `calc(0.5rem + ${problem.line} * 1.5rem)` }}
          >
            {problem.line === null ? '' : `Line ${problem.line}: `}
            {problem.message}
          </p>
        )}
      </div>
    </div>
  );
}

function WebhookUrl({ id }: { id: string }) {
  const url = webhookUrl(id);
  const input = useRef<HTMLInputElement>(null);
  const [status, setStatus] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(url);
      setStatus('Copied.');
    } catch {
      // no clipboard (plain http on a LAN address is not a secure context): select it for Ctrl+C
      input.current?.focus();
      input.current?.select();
      setStatus('Selected: press Ctrl+C (⌘C) to copy.');
    }
  };
  return (
    <div class="webhook">
      <label>
        Webhook URL
        <input ref={input} readOnly value={url} onFocus={(e) => (e.currentTarget as HTMLInputElement).select()} />
      </label>
      <button type="button" onClick={() => void copy()}>
        Copy
      </button>
      <span class="note" role="status">
        {status}
      </span>
    </div>
  );
}

/** Places a failed save: the API's `path: message` on the line of that path, anything else on the whole text. */
async function problemOf(err: unknown, text: string): Promise<Problem> {
  if (err instanceof TextError) return { message: err.message, line: err.line };
  if (err instanceof ApiError && err.status === 400) {
    const split = splitPath(err.message);
    if (split) return { message: err.message, line: await lineOfPath(text, split.path) };
  }
  return { message: describe(err), line: null };
}

export function AutomationEditor({ id }: { id: string | null }) {
  const [automation, setAutomation] = useState<Automation | null>(null);
  const [mode, setMode] = useState<Mode>('yaml');
  const [text, setText] = useState<string | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [status, setStatus] = useState('');
  const [loadError, setLoadError] = useState<string | null>(null);
  const [runs, setRuns] = useState<Trace[] | null>(null);
  const [runsError, setRunsError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const loadRuns = (automationId: string) =>
    traces(automationId).then(
      (t) => {
        setRuns(t);
        setRunsError(null);
        return t;
      },
      (e: unknown) => {
        setRunsError(describe(e));
        return null;
      },
    );

  useEffect(() => {
    setProblem(null);
    setStatus('');
    if (id === null) {
      setAutomation(null);
      setRuns(null);
      void toText(STARTER, mode).then(setText);
      return;
    }
    getAutomation(id).then(
      async (a) => {
        setAutomation(a);
        setText(await toText(editable(a), mode));
      },
      (e: unknown) => setLoadError(describe(e)),
    );
    void loadRuns(id);
    // not on a mode change: switchMode converts the text itself
  }, [id]);

  const focusLine = (line: number | null) => {
    const area = document.getElementById('automation-text') as HTMLTextAreaElement | null;
    if (!area) return;
    area.focus();
    if (line === null || text === null) return;
    const start =
      text
        .split('\n')
        .slice(0, line - 1)
        .join('\n').length + (line > 1 ? 1 : 0);
    area.setSelectionRange(start, start);
  };

  const switchMode = async (next: Mode) => {
    if (next === mode || text === null) return;
    try {
      const value = await fromText(text, mode);
      setText(await toText(value, next));
      setMode(next);
      setProblem(null);
    } catch (err) {
      const p = await problemOf(err, text);
      setProblem(p);
      focusLine(p.line);
    }
  };

  const save = async (e: Event) => {
    e.preventDefault();
    if (text === null) return;
    setBusy(true);
    setStatus('');
    setProblem(null);
    try {
      const body = await fromText(text, mode);
      const saved = id === null ? await create(body) : await update(id, body);
      setAutomation(saved);
      setStatus('Saved.');
      if (id === null) navigate(`/automations/${encodeURIComponent(saved.id)}`, true);
    } catch (err) {
      const p = await problemOf(err, text);
      setProblem(p);
      setTimeout(() => focusLine(p.line));
    } finally {
      setBusy(false);
    }
  };

  const run = async () => {
    if (!automation) return;
    setStatus('');
    setRunsError(null);
    try {
      await runNow(automation.id);
      setStatus('Run started.');
      // the run is asynchronous on the edge: look again until it shows (a few tries)
      const before = runs?.[0]?.run_id;
      for (let i = 0; i < 10; i++) {
        const t = await loadRuns(automation.id);
        if (t && t[0] && t[0].run_id !== before && t[0].state !== 'running') break;
        await new Promise((r) => setTimeout(r, 300));
      }
    } catch (err) {
      setRunsError(describe(err));
    }
  };

  if (loadError)
    return (
      <div>
        <h1>Automation</h1>
        <p class="error" role="alert">
          {loadError}
        </p>
        <a href="/automations" onClick={onLink}>
          All automations
        </a>
      </div>
    );
  if (text === null)
    return (
      <p class="note" role="status">
        Loading automation…
      </p>
    );
  return (
    <div class="automations">
      <p>
        <a href="/automations" onClick={onLink}>
          ← All automations
        </a>
      </p>
      <h1>{id === null ? 'New automation' : (automation?.alias ?? 'Automation')}</h1>
      {automation?.webhook_id && <WebhookUrl id={automation.webhook_id} />}
      <form onSubmit={(e) => void save(e)}>
        <div class="tabs" role="group" aria-label="Format">
          {(['yaml', 'json'] as const).map((m) => (
            <button
              key={m}
              type="button"
              class="secondary"
              aria-pressed={mode === m}
              onClick={() => void switchMode(m)}
            >
              {m.toUpperCase()}
            </button>
          ))}
        </div>
        <CodeArea
          text={text}
          mode={mode}
          problem={problem}
          onInput={(t) => {
            setText(t);
            setProblem(null);
          }}
        />
        <div class="actions">
          <button type="submit" disabled={busy}>
            {id === null ? 'Create' : 'Save'}
          </button>
          {automation && (
            <button type="button" class="secondary" onClick={() => void run()}>
              Run now
            </button>
          )}
          <span class="ok" role="status">
            {status}
          </span>
        </div>
      </form>
      {automation && (
        <section aria-labelledby="runs-title">
          <div class="title-row">
            <h2 id="runs-title">Runs</h2>
            <button type="button" class="secondary" onClick={() => void loadRuns(automation.id)}>
              Refresh
            </button>
          </div>
          <Alert message={runsError} />
          {runs && <TraceList runs={runs} />}
        </section>
      )}
    </div>
  );
}
