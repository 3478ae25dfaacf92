/**
 * OAuth 2.0 steps of a config flow: the page leaves for the provider's authorize URL and comes
 * back to `/integrations/oauth`, in one of two ways:
 * - `?code=…&state=…` (the redirect URI is this page, as on the cloud): the flow is found again
 *   by the `state` the authorize URL carries, kept in sessionStorage, so only the tab that left
 *   can finish the flow;
 * - `?flow_id=…` (the redirect URI is an edge's `/v1/config_flow/oauth/callback`, which finished
 *   the flow itself and sent the browser on): the page reads how the flow ended; `?error=…`
 *   (no `state`) when that callback found no flow for the provider's state.
 */
import type { FlowResult } from './flows.ts';

export const OAUTH_RETURN_PATH = '/integrations/oauth';

interface Pending {
  flowId: string;
  handler: string;
  state: string | null;
}

const KEY = 'smarthome.oauth-flows';

function read(): Pending[] {
  try {
    const raw = sessionStorage.getItem(KEY);
    return raw ? (JSON.parse(raw) as Pending[]) : [];
  } catch {
    return [];
  }
}

/** The authorize URL of a step, when it is an OAuth step (a form with an `authorize_url` placeholder, or an external step). */
export function authorizeUrl(step: FlowResult): string | null {
  if (step.type === 'external') return step.url;
  if (step.type === 'form') return step.description_placeholders?.authorize_url ?? null;
  return null;
}

/** Remembers the flow before the page leaves for `url`. */
export function rememberFlow(step: FlowResult, url: string): void {
  let state: string | null = null;
  try {
    state = new URL(url).searchParams.get('state');
  } catch {
    /* not a URL: matched as the latest flow */
  }
  const rest = read().filter((p) => p.flowId !== step.flowId);
  sessionStorage.setItem(
    KEY,
    JSON.stringify([...rest, { flowId: step.flowId, handler: step.handler, state }].slice(-5)),
  );
}

/** The flow a return with `state` belongs to (forgotten once taken); null when this tab started none. */
export function takeFlow(state: string | null): Pending | null {
  const all = read();
  const found =
    all.find((p) => state !== null && p.state === state) ?? [...all].reverse().find((p) => p.state === null) ?? null;
  if (found) sessionStorage.setItem(KEY, JSON.stringify(all.filter((p) => p !== found)));
  return found;
}

/** Forgets the flow `flowId` (an edge's callback finished it). */
export function forgetFlow(flowId: string): void {
  sessionStorage.setItem(KEY, JSON.stringify(read().filter((p) => p.flowId !== flowId)));
}

/** What the edge's callback's `?error=` means for the user (edge/src/config-flow/routes.ts: OAUTH_STATE_ERROR). */
export function callbackError(code: string): string {
  if (code === 'unknown_state')
    return 'The sign-in took too long or was already used; start the setup again from Integrations.';
  return `The sign-in did not finish (${code}); start the setup again from Integrations.`;
}

let returned: FlowResult | null = null;

/** The flow's answer to the return, for the Integrations page to show once. */
export function handBack(result: FlowResult): void {
  returned = result;
}
export function takeReturned(): FlowResult | null {
  const r = returned;
  returned = null;
  return r;
}
