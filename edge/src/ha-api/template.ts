import { AutomationTemplates } from '../automation/template.ts';
import type { StateMachine } from '../states/state-machine.ts';

/**
 * STAND-IN until the Jinja engine (edge/src/templates/template.ts, TemplateEngine.renderWithInfo)
 * lands: same signature, rendered by the automation engine's templates. It cannot tell which
 * states a template read, so it reports allStates (re-render on any change, rate-limited as
 * HA does for such templates). Swap: construct the real engine in edge.ts and delete this file.
 */
export interface RenderInfo {
  result: string;
  entities: string[];
  domains: string[];
  allStates: boolean;
}

export interface TemplateRenderer {
  /** throws TemplateError */
  renderWithInfo(source: string, vars: Record<string, unknown>): RenderInfo;
}

export class HaTemplateStandIn implements TemplateRenderer {
  private readonly templates: AutomationTemplates;

  constructor(states: StateMachine) {
    this.templates = new AutomationTemplates({ get: (id) => states.get(id), all: () => states.all(), onStateChanged: () => () => {} });
  }

  renderWithInfo(source: string, vars: Record<string, unknown>): RenderInfo {
    return { result: this.templates.renderString(source, vars), entities: [], domains: [], allStates: true };
  }
}
