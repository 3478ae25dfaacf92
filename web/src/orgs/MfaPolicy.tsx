import { useState } from 'preact/hooks';
import type { z } from 'zod';
import { Organization, type OrganizationWithRole } from '@smarthome/protocol/orgs';
import { api, describe } from '../api/http.ts';
import { Alert } from '../app/Alert.tsx';

type Org = z.infer<typeof OrganizationWithRole>;

/** Admin only: require two-step sign-in of every member (PATCH require_mfa); the API's refusal (409 for an admin without it) as worded. */
export function MfaPolicy({ org, onSaved }: { org: Org; onSaved: () => Promise<void> }) {
  const [error, setError] = useState<string | null>(null);
  // the switch as asked while the API answers; null: as the organization has it
  const [asked, setAsked] = useState<boolean | null>(null);
  const set = async (on: boolean) => {
    setError(null);
    setAsked(on);
    try {
      await api('PATCH', `/v1/organizations/${encodeURIComponent(org.id)}`, {
        body: { require_mfa: on },
        schema: Organization,
      });
      await onSaved();
    } catch (err) {
      setError(describe(err));
    } finally {
      setAsked(null);
    }
  };
  return (
    <section class="card" aria-labelledby="mfa-policy-h">
      <h2 id="mfa-policy-h">Sign-in policy</h2>
      <label class="check">
        <input
          type="checkbox"
          role="switch"
          checked={asked ?? org.require_mfa}
          disabled={asked !== null}
          onChange={(e) => void set((e.currentTarget as HTMLInputElement).checked)}
        />
        Require two-step sign-in of every member
      </label>
      <p class="note">
        Members without it cannot act in this organization until they turn it on under Account; it applies at once.
      </p>
      <Alert message={error} />
    </section>
  );
}
