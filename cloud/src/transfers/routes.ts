import { routes } from '@smarthome/protocol';
import type { CloudRouter, CloudServices } from '../context.ts';
import { rowId, userOf } from '../http/route-inputs.ts';
import type { TransferResourceHandlers } from './resources.ts';
import { TransferService } from './service.ts';

/** `handlers`: the transferable resource types (modules.ts registers them). */
export function mountTransferRoutes(router: CloudRouter, s: CloudServices, handlers: TransferResourceHandlers): void {
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
