/**
 * OAuth Demo Cloud: an integration set up with the OAuth 2.0 authorization-code grant.
 * Start → form step "auth" with fields `code` and `state`; its description_placeholders carry
 * `authorize_url` (the provider's authorize URL with a random `state`) for the app to open.
 * Advance with `{code, state}` (the values the provider put on the redirect), either from the
 * app or through the edge's `GET /v1/config_flow/oauth/callback?code=…&state=…` (the
 * redirect_uri) → the code is exchanged at the token URL and the entry holds the tokens.
 * A wrong state aborts (invalid_state); a failed token request aborts (oauth_error,
 * oauth_timeout, cannot_connect). While loaded, the entry refreshes its access token
 * shortly before it expires (when a refresh_token was issued).
 */
import { errorFields } from '@smarthome/protocol/server';
import type { DataSchemaField } from '@smarthome/protocol';
import type { ConfigFlow, FlowContext, Integration, StepResult } from '../../config-flow/types.ts';
import {
  buildAuthorizeUrl,
  exchangeCode,
  newState,
  refreshToken,
  statesMatch,
  TokenRequestError,
  type OAuth2ClientConfig,
  type OAuth2Token,
} from './oauth2.ts';

export * from './oauth2.ts';

export const OAUTH_DEMO_CLOUD_DOMAIN = 'oauth_demo_cloud';

export interface OAuthDemoCloudOptions extends OAuth2ClientConfig {
  now?: () => number;
  /** refresh this long before expires_at (default 60 s) */
  refreshMarginMs?: number;
}

export const authSchema: DataSchemaField[] = [
  { name: 'code', type: 'string', required: false },
  { name: 'state', type: 'string', required: true },
  /** the provider's `error` redirect parameter (e.g. access_denied) */
  { name: 'error', type: 'string', required: false },
];

class OAuthFlow implements ConfigFlow {
  readonly firstStep = 'user';
  private readonly ctx: FlowContext;
  private readonly cfg: OAuthDemoCloudOptions;
  private readonly state = newState();
  constructor(ctx: FlowContext, cfg: OAuthDemoCloudOptions) {
    this.ctx = ctx;
    this.cfg = cfg;
  }

  async step(stepId: string, input?: Record<string, unknown>): Promise<StepResult> {
    const form: StepResult = {
      type: 'form',
      stepId: 'auth',
      data_schema: authSchema,
      description_placeholders: { authorize_url: buildAuthorizeUrl(this.cfg, this.state) },
      callback_state: this.state,
    };
    if (stepId === 'user') return form;
    if (stepId !== 'auth' || !input) return form;

    // A state that does not match is a forged or replayed redirect: end the flow.
    if (!statesMatch(this.state, String(input.state))) return { type: 'abort', reason: 'invalid_state' };
    if (typeof input.error === 'string' && input.error !== '')
      return { type: 'abort', reason: 'user_rejected_authorize' };
    if (typeof input.code !== 'string' || input.code === '') return { ...form, errors: { code: 'required' } };

    let token: OAuth2Token;
    try {
      token = await exchangeCode(this.cfg, input.code, (this.cfg.now ?? Date.now)());
    } catch (err) {
      if (err instanceof TokenRequestError) {
        this.ctx.log.warn(`oauth_demo_cloud: code exchange failed: ${err.message}`);
        return { type: 'abort', reason: err.reason };
      }
      throw err;
    }
    return {
      type: 'create_entry',
      title: 'OAuth Demo Cloud',
      data: { auth_implementation: OAUTH_DEMO_CLOUD_DOMAIN, token },
    };
  }
}

export function createOAuthDemoCloudIntegration(cfg: OAuthDemoCloudOptions): Integration {
  const now = cfg.now ?? Date.now;
  const margin = cfg.refreshMarginMs ?? 60_000;
  return {
    domain: OAUTH_DEMO_CLOUD_DOMAIN,
    name: 'OAuth Demo Cloud',
    createFlow: (ctx) => new OAuthFlow(ctx, cfg),
    setupEntry(entry, ctx) {
      let timer: NodeJS.Timeout | undefined;
      let token = entry.data.token as OAuth2Token | undefined;
      const schedule = (retryMs?: number) => {
        if (!token?.refresh_token || !token.expires_at) return;
        const delay = retryMs ?? Math.max(1000, token.expires_at * 1000 - margin - now());
        timer = setTimeout(
          () => {
            void refresh();
          },
          Math.min(delay, 2 ** 31 - 1),
        );
        timer.unref();
      };
      const refresh = async () => {
        try {
          const next = await refreshToken(cfg, token!.refresh_token!, now());
          token = { ...next, refresh_token: next.refresh_token ?? token!.refresh_token };
          await ctx.updateData({ ...entry.data, token });
        } catch (err) {
          ctx.log.warn(`oauth_demo_cloud: token refresh for entry ${entry.id} failed`, errorFields(err));
          schedule(5 * 60_000);
          return;
        }
        schedule();
      };
      schedule();
      return {
        unload: () => {
          if (timer) clearTimeout(timer);
          timer = undefined;
        },
      };
    },
  };
}
