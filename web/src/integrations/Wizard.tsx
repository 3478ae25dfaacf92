import { useEffect, useRef, useState } from 'preact/hooks';
import { describe } from '../api/http.ts';
import { onEscape } from '../app/focus.tsx';
import { FlowForm, labelOf } from './FlowForm.tsx';
import * as flows from './flows.ts';
import type { FlowResult } from './flows.ts';
import { authorizeUrl, rememberFlow } from './oauth.ts';
import { Alert } from '../app/Alert.tsx';

const ABORTS: Record<string, string> = {
  single_instance_allowed: 'Only one of these can be set up, and it already is',
  already_configured: 'This is already set up',
  user_rejected_authorize: 'The sign-in at the provider was refused',
  invalid_state: 'The sign-in answer did not belong to this setup',
  oauth_error: 'The provider refused the sign-in',
  oauth_timeout: 'The provider did not answer in time',
  cannot_connect: 'The provider cannot be reached',
};
const abortText = (reason: string) => (ABORTS[reason] ? `${ABORTS[reason]} (${reason}).` : `${reason}.`);

/**
 * One running config flow, step by step: forms from their data_schema, OAuth steps as a link
 * to the provider (the page comes back to /integrations/oauth), and the end: the entry
 * created or the reason the flow stopped. Cancel deletes the flow on the server.
 */
export function Wizard(props: {
  first: FlowResult;
  name: string;
  onCreated: (entryId: number) => void;
  onClose: () => void;
}) {
  const [step, setStep] = useState<FlowResult>(props.first);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const ended = step.type === 'create_entry' || step.type === 'abort';
  // each new step (and the end) takes the focus, so keyboard and screen-reader users follow
  useEffect(
    () => heading.current?.focus(),
    [step.type === 'form' || step.type === 'external' ? step.stepId : step.type],
  );
  useEffect(() => {
    if (props.first.type === 'create_entry') props.onCreated(props.first.result.config_entry_id);
  }, []);

  const advance = async (input: Record<string, unknown>) => {
    setBusy(true);
    setError(null);
    try {
      const next = await flows.advanceFlow(step.flowId, input);
      setStep(next);
      if (next.type === 'create_entry') props.onCreated(next.result.config_entry_id);
    } catch (err) {
      setError(describe(err));
    } finally {
      setBusy(false);
    }
  };
  const cancel = async () => {
    setError(null);
    try {
      await flows.abortFlow(step.flowId);
      props.onClose();
    } catch (err) {
      setError(describe(err));
    }
  };

  const url = authorizeUrl(step);
  return (
    <section
      class="card wizard"
      aria-labelledby="wizard-heading"
      data-flow={step.flowId}
      onKeyDown={onEscape(() => (ended ? props.onClose() : void cancel()))}
    >
      <h2 id="wizard-heading" tabIndex={-1} ref={heading}>
        {ended ? `Set up ${props.name}: ${step.type === 'create_entry' ? 'done' : 'stopped'}` : `Set up ${props.name}`}
      </h2>
      <Alert message={error} />
      {step.type === 'create_entry' && (
        <p class="ok" role="status">
          {step.title} was added.
        </p>
      )}
      {step.type === 'abort' && (
        <p class="error" role="alert">
          Setup ended: {abortText(step.reason)}
        </p>
      )}
      {(step.type === 'form' || step.type === 'external') && (
        <>
          <p class="note">Step: {labelOf(step.stepId)}</p>
          {url && (
            <div class="oauth">
              <p>Sign in at the provider to allow access; you come back here when it is done.</p>
              <p>
                <a class="button" href={url} rel="noreferrer" onClick={() => rememberFlow(step, url)}>
                  Sign in to {props.name}
                </a>
              </p>
              {step.errors.code && <p class="error">No authorization code came back ({step.errors.code}).</p>}
            </div>
          )}
          {url ? (
            <details>
              <summary>Enter the provider’s answer by hand</summary>
              <FlowForm
                key={`${step.flowId}-${step.stepId}`}
                flowId={step.flowId}
                schema={step.data_schema}
                errors={step.errors}
                busy={busy}
                submitLabel="Submit"
                onSubmit={(input) => void advance(input)}
              />
            </details>
          ) : (
            <FlowForm
              key={`${step.flowId}-${step.stepId}`}
              flowId={step.flowId}
              schema={step.data_schema}
              errors={step.errors}
              busy={busy}
              submitLabel="Submit"
              onSubmit={(input) => void advance(input)}
            />
          )}
          <p>
            <button type="button" class="secondary" onClick={() => void cancel()}>
              Cancel setup
            </button>
          </p>
        </>
      )}
      {ended && (
        <button type="button" onClick={props.onClose}>
          Close
        </button>
      )}
    </section>
  );
}
