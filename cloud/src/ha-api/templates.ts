import type { EntityState } from '@smarthome/protocol';
import type { HaEvent, HaState, HaTemplateUpdate } from '@smarthome/protocol/ha/index';
import { HaCommandError, type HaTemplateRequest, type Unsubscribe } from '@smarthome/protocol/server/ha/index';
import { subscribeTemplate } from '@smarthome/edge/ha-api/template-subscription';
import { TemplateEngine } from '@smarthome/edge/templates/template';

/** What cloud templates need, passed in: the caller's viewable states and their live changes. */
export interface CloudTemplateDeps<P> {
  visibleStates(p: P): Promise<EntityState[]>;
  /** state_changed events of what the caller may view */
  subscribeStates(p: P, listener: (event: HaEvent) => void): Unsubscribe;
}

/** A state_changed's new state back in the mirror's form, keeping what HA's shape drops (name, platform). */
function toEntityState(s: HaState, before: EntityState | undefined): EntityState {
  const domain = s.entity_id.slice(0, s.entity_id.indexOf('.'));
  const friendly = s.attributes.friendly_name;
  return {
    ...(before ?? {
      entity_id: s.entity_id,
      domain,
      name: typeof friendly === 'string' ? friendly : s.entity_id,
      platform: 'unknown',
    }),
    state: s.state,
    attributes: s.attributes,
    last_changed: s.last_changed,
    last_updated: s.last_updated,
  };
}

/**
 * render_template and POST /api/template on the cloud: rendered here, by the edge's Jinja engine
 * (same sandbox and limits), over the mirror states the caller may view, so a template never
 * reads an entity its caller may not see. A subscription keeps its own copy of those states,
 * updated by the caller's state_changed events, and re-renders as the edge does (the entities
 * and domains the render read; all states at most once a second).
 */
export class CloudTemplates<P> {
  private readonly deps: CloudTemplateDeps<P>;

  constructor(deps: CloudTemplateDeps<P>) {
    this.deps = deps;
  }

  async render(p: P, template: string, variables: Record<string, unknown> = {}): Promise<string> {
    const states = new Map((await this.deps.visibleStates(p)).map((s) => [s.entity_id, s]));
    try {
      return engineOver(states).renderWithInfo(template, variables).result;
    } catch (err) {
      // whatever a template does wrong is the template's error (HA: TemplateError), never a 500
      throw new HaCommandError('template_error', err instanceof Error ? err.message : String(err));
    }
  }

  async subscribe(
    p: P,
    request: HaTemplateRequest,
    listener: (update: HaTemplateUpdate) => void,
  ): Promise<Unsubscribe> {
    const states = new Map((await this.deps.visibleStates(p)).map((s) => [s.entity_id, s]));
    const bus = {
      on: (_type: 'state_changed', fn: (event: { entity_id: string }) => void) =>
        this.deps.subscribeStates(p, (event) => {
          const data = event.data as { entity_id: string; new_state: HaState | null };
          if (data.new_state) states.set(data.entity_id, toEntityState(data.new_state, states.get(data.entity_id)));
          else states.delete(data.entity_id);
          fn(data);
        }),
    };
    return subscribeTemplate({ templates: engineOver(states), bus }, request, listener);
  }
}

function engineOver(states: Map<string, EntityState>): TemplateEngine {
  return new TemplateEngine({}, { states: { get: (id) => states.get(id), all: () => [...states.values()] } });
}
