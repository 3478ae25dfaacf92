import { z } from 'zod';
import type { HaCurrentUser } from '../../ha/index.ts';
import { command } from './command.ts';

const bare = <T extends string>(type: T) => z.object({ id: z.number().int(), type: z.literal(type) });

/** The holder of an API token: it may do everything the API allows (the cloud answers with its user instead). */
export const API_TOKEN_USER: HaCurrentUser = {
  id: 'api-token',
  name: 'API token',
  is_owner: true,
  is_admin: true,
  credentials: [],
  mfa_modules: [],
};

/**
 * Commands clients send at connect that we answer without a backend call: Node-RED's HA nodes
 * (node-red-contrib-home-assistant-websocket) need auth/current_user with is_admin, and wait for
 * the floor and label registries (we have neither: empty lists) before they run.
 */
export const clientCommands = {
  'auth/current_user': command(bare('auth/current_user'), () => API_TOKEN_USER),
  'config/floor_registry/list': command(bare('config/floor_registry/list'), () => []),
  'config/label_registry/list': command(bare('config/label_registry/list'), () => []),
};
