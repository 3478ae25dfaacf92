import type { AuthenticatedUser } from './users.ts';

/**
 * Broker authorization. The rule, in full:
 *
 * - The edge itself (internal publishes) and users with role `integration` (bridges such as
 *   Zigbee2MQTT or an integration running next to the edge) may publish and subscribe anywhere
 *   except `$SYS`-style topics, which only the broker writes.
 * - A `device` user
 *   - may not subscribe to a filter whose first level is a wildcard (`#`, `+/…`) or starts
 *     with `$`: no listening to the whole house; nor to a command topic owned by another user;
 *   - may publish anywhere except: `$…` topics; the birth topic `<prefix>/status`; a command
 *     topic owned by another user; a discovery config topic owned by another user; a discovery
 *     config that declares command topics owned by another user;
 *   - never receives messages on command topics owned by another user, even through a
 *     wildcard such as `cmnd/+/POWER` (checked at delivery).
 * - Ownership: the user who published an accepted discovery config owns that config topic and
 *   every `*command_topic` it declares. Ownership is rebuilt from the entity registry on start.
 *   Deleting the owner releases it (no owner: the next publisher claims it); the account owner
 *   may reassign or release it (MqttDiscovery.setOwner, `PUT /v1/mqtt/owners`).
 * - A client whose user was deleted has no user: nothing it sends passes, nothing reaches it.
 *
 * A refused publish is acknowledged as its QoS requires and dropped (MQTT 3.1.1 has no negative
 * PUBACK; MQTT-3.3.5-2 allows this or closing the connection); a refused subscription is granted
 * as 0x80 (failure). Either way the broker logs a warn line and the connection stays up.
 */
export class MqttAcl {
  /** `<prefix>/status` and `<prefix>/`, made once rather than per publish */
  private readonly birthTopic: string;
  private readonly discoveryTopics: string;
  private readonly commandOwners = new Map<string, string>();
  private readonly discoveryOwners = new Map<string, { owner: string; commandTopics: string[] }>();

  constructor(discoveryPrefix = 'homeassistant') {
    this.birthTopic = `${discoveryPrefix}/status`;
    this.discoveryTopics = `${discoveryPrefix}/`;
  }

  /** Records (or clears, with owner null) who owns a discovery config and its command topics. */
  setDiscoveryOwner(discoveryTopic: string, owner: string | null, commandTopics: string[]): void {
    const previous = this.discoveryOwners.get(discoveryTopic);
    if (previous) {
      for (const t of previous.commandTopics)
        if (this.commandOwners.get(t) === previous.owner) this.commandOwners.delete(t);
      this.discoveryOwners.delete(discoveryTopic);
    }
    if (owner === null) return;
    this.discoveryOwners.set(discoveryTopic, { owner, commandTopics });
    for (const t of commandTopics) if (!this.commandOwners.has(t)) this.commandOwners.set(t, owner);
  }

  commandOwner(topic: string): string | undefined {
    return this.commandOwners.get(topic);
  }

  /** Why `user` may not subscribe to `filter`, or null when it may. */
  subscribeRefusal(user: AuthenticatedUser | undefined, filter: string): string | null {
    if (!user) return 'not authenticated';
    if (filter.startsWith('$')) return "$ topics are the broker's";
    if (user.role === 'integration') return null;
    const first = filter.split('/', 1)[0];
    if (first === '#' || first === '+') return 'a device may not subscribe to a filter starting with a wildcard';
    // a wildcard filter may also match others' command topics: those are held back at delivery
    const owner = this.commandOwners.get(filter);
    if (owner !== undefined && owner !== user.username) return `command topic owned by ${owner}`;
    return null;
  }

  /**
   * Why `user` may not publish to `topic`, or null when it may. `declaredCommandTopics`: for
   * a discovery config publish, the command topics its payload names.
   */
  publishRefusal(
    user: AuthenticatedUser | undefined,
    topic: string,
    declaredCommandTopics?: () => string[],
  ): string | null {
    if (!user) return 'not authenticated';
    if (topic.startsWith('$')) return "$ topics are the broker's";
    if (user.role === 'integration') return null;
    if (topic === this.birthTopic) return "the birth topic is the edge's";
    const cmdOwner = this.commandOwners.get(topic);
    if (cmdOwner !== undefined && cmdOwner !== user.username) return `command topic owned by ${cmdOwner}`;
    if (topic.startsWith(this.discoveryTopics)) {
      const owner = this.discoveryOwners.get(topic)?.owner;
      if (owner !== undefined && owner !== user.username) return `discovery config owned by ${owner}`;
      for (const t of declaredCommandTopics?.() ?? []) {
        const o = this.commandOwners.get(t);
        if (o !== undefined && o !== user.username) return `the config declares ${t}, a command topic owned by ${o}`;
      }
    }
    return null;
  }

  canReceive(user: AuthenticatedUser | undefined, topic: string): boolean {
    if (!user) return false;
    if (user.role === 'integration') return true;
    const owner = this.commandOwners.get(topic);
    return owner === undefined || owner === user.username;
  }
}
