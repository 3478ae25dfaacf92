import type { EntityState } from '@smarthome/protocol';
import type { EventBus, EventCause } from '../bus.ts';
import type { Registry } from '../registry/registry.ts';
import type { StateMachine } from '../states/state-machine.ts';
import { EdgeError, ServiceError } from '../errors.ts';
import { TemplateError } from '../templates/template.ts';

/** A platform (mqtt, or an integration) that carries out services for its own entities. */
export interface PlatformServices {
  readonly platform: string;
  /** services this platform offers for entities of `domain` */
  supportedServices(domain: string): string[];
  /** throws ServiceError (→ 400) on bad data */
  callService(entityId: string, service: string, data: Record<string, unknown>): Promise<void>;
}

/** Thrown for an unknown entity (→ 404). */
export class UnknownEntityError extends EdgeError {
  constructor(entityId: string) {
    super('not_found', `entity ${entityId} not found`);
    this.name = 'UnknownEntityError';
  }
}

/** Thrown for a service nobody offers, or data it cannot use (→ 400). */
export class ServiceCallError extends EdgeError {
  constructor(message: string) {
    super('invalid_input', message);
    this.name = 'ServiceCallError';
  }
}

export interface ServiceCall {
  domain: string;
  service: string;
  entity_ids: string[];
  data: Record<string, unknown>;
  /** set when an automation run calls: carried by the call_service event */
  cause?: EventCause;
}

/**
 * `domain.service` on entities → the platform that owns each entity. Order of checks:
 * a service no platform offers for the domain is 400, then an unknown entity (or one of
 * another domain) is 404, then the platform validates the data (400).
 */
export class ServiceRegistry {
  private readonly platforms = new Map<string, PlatformServices>();
  private readonly registry: Registry;
  private readonly states: StateMachine;
  private readonly bus: EventBus;

  constructor(registry: Registry, states: StateMachine, bus: EventBus) {
    this.registry = registry;
    this.states = states;
    this.bus = bus;
  }

  registerPlatform(platform: PlatformServices): () => void {
    this.platforms.set(platform.platform, platform);
    return () => {
      if (this.platforms.get(platform.platform) === platform) this.platforms.delete(platform.platform);
    };
  }

  /** Every `domain.service` some platform offers. */
  list(): Record<string, string[]> {
    const out: Record<string, Set<string>> = {};
    const domains = new Set(this.registry.listEntities().map((e) => e.domain));
    for (const domain of domains) {
      for (const p of this.platforms.values())
        for (const s of p.supportedServices(domain)) (out[domain] ??= new Set()).add(s);
    }
    return Object.fromEntries(Object.entries(out).map(([d, s]) => [d, [...s].sort()]));
  }

  async call(call: ServiceCall): Promise<EntityState[]> {
    const { domain, service, entity_ids: entityIds, data } = call;
    const offered = [...this.platforms.values()].some((p) => p.supportedServices(domain).includes(service));
    if (!offered) throw new ServiceCallError(`service ${domain}.${service} is not supported`);
    const targets = entityIds.map((id) => {
      const entity = this.registry.getEntity(id);
      if (!entity || entity.domain !== domain) throw new UnknownEntityError(id);
      const platform = this.platforms.get(entity.platform);
      if (!platform || !platform.supportedServices(domain).includes(service)) {
        throw new ServiceCallError(`service ${domain}.${service} is not supported by ${id}`);
      }
      return { id, platform };
    });
    for (const t of targets) {
      try {
        await t.platform.callService(t.id, service, data);
      } catch (err) {
        if (err instanceof ServiceError || err instanceof TemplateError) throw new ServiceCallError(err.message);
        throw err;
      }
    }
    this.bus.emit('call_service', {
      domain,
      service,
      entity_ids: entityIds,
      data,
      ...(call.cause ? { cause: call.cause } : {}),
    });
    return targets.map((t) => this.states.get(t.id)).filter((s): s is EntityState => s !== undefined);
  }
}
