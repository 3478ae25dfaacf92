import type { HaTemplateUpdate } from '@smarthome/protocol/ha/index';
import { HaCommandError, type HaTemplateRequest, type Unsubscribe } from '@smarthome/protocol/server/ha/index';
import { toNative } from '../automation/template.ts';
import type { RenderResult as RenderInfo, TemplateEngine } from '../templates/template.ts';

/** What render_template needs of the template engine. */
export type TemplateRenderer = Pick<TemplateEngine, 'renderWithInfo'>;

/** Where the subscription hears of state changes: the edge bus, or the cloud's fan-out of the caller's edges. */
export interface StateChanges {
  on(type: 'state_changed', listener: (event: { entity_id: string }) => void): () => void;
}

/** HA re-renders a template that reads all states (or whole domains) at most once a second (helpers/event.py). */
export const ALL_STATES_RATE_LIMIT_MS = 1000;

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * render_template as HA's websocket_api does it (async_track_template_result): the first
 * render now, then again when a state it read changes; an update only when the result differs.
 * A first render slower than `timeout` or failing under `strict` is a template_error.
 */
export function subscribeTemplate(
  deps: { templates: TemplateRenderer; bus: StateChanges; now?: () => number },
  request: HaTemplateRequest,
  listener: (update: HaTemplateUpdate) => void,
): Unsubscribe {
  const now = deps.now ?? Date.now;
  const vars = request.variables ?? {};
  let last: string | undefined;
  let info: RenderInfo | null = null;
  let lastRenderAt = 0;
  let timer: NodeJS.Timeout | null = null;

  const render = (first: boolean) => {
    lastRenderAt = now();
    const started = performance.now();
    try {
      info = deps.templates.renderWithInfo(request.template, vars);
    } catch (err) {
      if (first && request.strict) throw new HaCommandError('template_error', message(err));
      last = undefined;
      // what it reads is unknown: any change may fix it
      info ??= { result: '', entities: [], domains: [], allStates: true };
      if (request.report_errors) listener({ error: message(err), level: 'ERROR' });
      return;
    }
    if (first && request.timeout !== undefined && performance.now() - started > request.timeout * 1000) {
      throw new HaCommandError('template_error', `Exceeded maximum execution time of ${request.timeout}s`);
    }
    if (info.result === last) return;
    last = info.result;
    listener({
      result: toNative(info.result),
      listeners: {
        all: info.allStates,
        domains: [...info.domains].sort(),
        entities: [...info.entities].sort(),
        time: false,
      },
    });
  };

  render(true);
  const off = deps.bus.on('state_changed', (e) => {
    if (!info || timer) return;
    const domain = e.entity_id.slice(0, e.entity_id.indexOf('.'));
    const rateLimited = info.allStates || info.domains.length > 0;
    if (!info.allStates && !info.entities.includes(e.entity_id) && !info.domains.includes(domain)) return;
    const wait = rateLimited ? lastRenderAt + ALL_STATES_RATE_LIMIT_MS - now() : 0;
    // after the change's own listeners ran (the state machine emits before it returns)
    timer = setTimeout(
      () => {
        timer = null;
        render(false);
      },
      Math.max(0, wait),
    );
  });
  return () => {
    off();
    if (timer) clearTimeout(timer);
    timer = null;
  };
}
