import { routes } from '@smarthome/protocol';
import type { CloudRouter } from '../context.ts';
import type { CloudDatabase } from '../db/database.ts';
import type { MailQueue } from '../mail/queue.ts';
import type { AuthService } from '../auth/service.ts';
import { rowId, userOf } from '../http/route-inputs.ts';
import type { TransferResourceHandlers } from './resources.ts';
import { TransferService } from './service.ts';

export interface TransferRoutesDeps {
  database: CloudDatabase;
  auth: AuthService;
  mail: MailQueue;
  /** where transfer links point */
  publicUrl: () => string;
}

/** `handlers`: the transferable resource types (modules.ts registers them). */
export function mountTransferRoutes(
  router: CloudRouter,
  s: TransferRoutesDeps,
  handlers: TransferResourceHandlers,
): void {
  const transfers = new TransferService({
    database: s.database,
    auth: s.auth,
    handlers,
    mail: s.mail,
    publicUrl: s.publicUrl,
  });

  router.add(routes.createTransferRoute, async ({ auth, body }) => transfers.create(userOf(auth), body));
  router.add(routes.listTransfersRoute, async ({ auth }) => transfers.list(userOf(auth)));
  router.add(routes.acceptTransferRoute, async ({ auth, params }) =>
    transfers.act(userOf(auth), rowId(params.id), 'accept'),
  );
  router.add(routes.declineTransferRoute, async ({ auth, params }) =>
    transfers.act(userOf(auth), rowId(params.id), 'decline'),
  );
  router.add(routes.cancelTransferRoute, async ({ auth, params }) =>
    transfers.act(userOf(auth), rowId(params.id), 'cancel'),
  );
}
