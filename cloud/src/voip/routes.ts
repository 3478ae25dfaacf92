import path from 'node:path';
import { routes } from '@smarthome/protocol';
import type { CloudRouter } from '../context.ts';
import type { CloudConfig } from '../config.ts';
import type { CloudDatabase } from '../db/database.ts';
import { rowId, userOf } from '../http/route-inputs.ts';
import { resolveScope } from '../orgs/scope.ts';
import { SecretBox } from './secret-box.ts';
import { VoipService } from './service.ts';

/** The AES-256-GCM key for SIP passwords, generated on first use. */
export const voipKeyFile = (dataDir: string) => path.join(dataDir, 'voip-secret.key');

export interface VoipRoutesDeps {
  config: Pick<CloudConfig, 'dataDir' | 'voipSecretKey'>;
  database: CloudDatabase;
}

export function mountVoipRoutes(router: CloudRouter, s: VoipRoutesDeps): void {
  const voip = new VoipService(
    () => s.database.db,
    new SecretBox(voipKeyFile(s.config.dataDir), s.config.voipSecretKey ?? null),
  );
  const scopeOf = (c: Parameters<typeof resolveScope>[1], auth: Parameters<typeof userOf>[0]) =>
    resolveScope(s.database.db, c, userOf(auth));

  router.add(routes.createVoipAccountRoute, async ({ c, auth, body }) => voip.create(await scopeOf(c, auth), body));
  router.add(routes.listVoipAccountsRoute, async ({ c, auth }) => voip.list(await scopeOf(c, auth)));
  router.add(routes.deleteVoipAccountRoute, async ({ c, auth, params }) => {
    await voip.remove(await scopeOf(c, auth), rowId(params.id));
    return { message: 'voip account deleted' };
  });
}
