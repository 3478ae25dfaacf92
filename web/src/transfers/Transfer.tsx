import { useEffect, useState } from 'preact/hooks';
import { Transfer as TransferSchema, TransferList, type Transfer } from '@smarthome/protocol/transfers';
import { api, describe } from '../api/http.ts';
import { onLink } from '../app/router.ts';
import { Alert } from '../app/Alert.tsx';

const nameOf = (t: Transfer): string =>
  typeof t.metadata?.name === 'string' && t.metadata.name ? t.metadata.name : t.resource_id;

const what: Record<string, string> = {
  physical_device: 'device',
  user_product: 'product',
  config_entry: 'integration',
  ui_dashboard: 'dashboard',
};

/**
 * /transfers/<id> (the link of a transfer mail): the transfer offered to the signed-in account,
 * accepted or declined here. The API lists only transfers this account may see, so one sent to
 * an unverified address does not show until the address is confirmed.
 */
export function TransferPage({ id }: { id: number }) {
  const [transfer, setTransfer] = useState<Transfer | null>(null);
  const [missing, setMissing] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    api('GET', '/v1/transfers', { schema: TransferList, org: null }).then(
      (list) => {
        const t = list.find((x) => x.id === id);
        if (t) setTransfer(t);
        else setMissing(true);
      },
      (e: unknown) => setError(describe(e)),
    );
  }, [id]);
  const answer = async (verb: 'accept' | 'decline' | 'cancel') => {
    setBusy(true);
    setError(null);
    try {
      setTransfer(await api('POST', `/v1/transfers/${id}/${verb}`, { schema: TransferSchema, org: null }));
    } catch (err) {
      setError(describe(err));
    } finally {
      setBusy(false);
    }
  };
  const kind = transfer ? (what[transfer.resource_type] ?? transfer.resource_type.replace('_', ' ')) : '';
  return (
    <div>
      <h1>Transfer</h1>
      <Alert message={error} />
      {missing && (
        <p class="note">
          No transfer {id} for this account: it was sent to another address, or this address is not confirmed yet
          (follow the link of the verification mail, then open this page again).
        </p>
      )}
      {transfer && (
        <section class="card">
          <h2>
            The {kind} “{nameOf(transfer)}”
          </h2>
          <p>
            {transfer.direction === 'received'
              ? `Offered to ${transfer.to_email}; it becomes yours when you accept.`
              : `You offered it to ${transfer.to_email}.`}{' '}
            Expires {new Date(transfer.expires_at).toLocaleString()}.
          </p>
          <p>
            Status: <span class={`badge ${transfer.status}`}>{transfer.status}</span>
          </p>
          {transfer.status === 'pending' &&
            (transfer.direction === 'received' ? (
              <p class="actions">
                <button type="button" disabled={busy} onClick={() => void answer('accept')}>
                  Accept the transfer
                </button>
                <button type="button" class="secondary" disabled={busy} onClick={() => void answer('decline')}>
                  Decline
                </button>
              </p>
            ) : (
              <p class="actions">
                <button type="button" class="danger" disabled={busy} onClick={() => void answer('cancel')}>
                  Cancel the transfer
                </button>
              </p>
            ))}
          {transfer.status === 'accepted' && transfer.direction === 'received' && (
            <p role="status">
              It is yours now.{' '}
              <a href="/" onClick={onLink}>
                Open your dashboard
              </a>
            </p>
          )}
          {transfer.status === 'declined' && transfer.direction === 'received' && (
            <p role="status">You declined it; the sender keeps it.</p>
          )}
        </section>
      )}
    </div>
  );
}
