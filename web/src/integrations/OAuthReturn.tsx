import { useEffect, useState } from 'preact/hooks';
import { describe } from '../api/http.ts';
import { navigate } from '../app/router.ts';
import { advanceFlow, readFlow, type FlowResult } from './flows.ts';
import { callbackError, forgetFlow, handBack, takeFlow } from './oauth.ts';

/**
 * Where the provider sends the browser back (`?code=…&state=…`, or `?error=…`): the flow this
 * tab started is advanced with what came back, the code leaves the address bar, and the
 * Integrations page shows the outcome (or the next step). An edge's own callback comes here
 * too, having advanced the flow: `?flow_id=…`, and the outcome is read (see oauth.ts); or, when
 * it found no flow for the provider's state, `?error=…` alone, which is said in words.
 */
export function OAuthReturnPage() {
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const q = new URLSearchParams(location.search);
    const state = q.get('state');
    const flowId = q.get('flow_id');
    // the code is single-use and secret: out of the address bar and history at once
    history.replaceState(null, '', '/integrations/oauth');
    const done = (r: FlowResult) => {
      handBack(r);
      navigate('/integrations', true);
    };
    if (flowId && !q.has('code')) {
      // an edge's callback has advanced the flow already: its result is read, with this user's token
      forgetFlow(flowId);
      readFlow(flowId).then(done, (err: unknown) => setError(describe(err)));
      return;
    }
    const failed = q.get('error');
    if (failed && state === null) {
      // the edge's callback found no flow to advance: nothing to finish here, the user starts again
      setError(callbackError(failed));
      return;
    }
    const pending = takeFlow(state);
    if (!pending) {
      setError('No setup in this tab is waiting for a sign-in (it was finished, cancelled or started elsewhere).');
      return;
    }
    const input: Record<string, string> = { state: state ?? '' };
    for (const k of ['code', 'error']) {
      const v = q.get(k);
      if (v) input[k] = v;
    }
    advanceFlow(pending.flowId, input).then(done, (err: unknown) => setError(describe(err)));
  }, []);
  if (error)
    return (
      <div>
        <h1>Integrations</h1>
        <p class="error" role="alert">
          {error}
        </p>
        <p>
          <a href="/integrations">Back to integrations</a>
        </p>
      </div>
    );
  return (
    <p class="note" role="status">
      Finishing the sign-in…
    </p>
  );
}
