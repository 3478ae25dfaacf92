import { useEffect, useState } from 'preact/hooks';
import { z } from 'zod';
import { Plan, Subscription, Usage } from '@smarthome/protocol/billing';
import { api, describe } from '../api/http.ts';
import './account.css';
import { Alert } from '../app/Alert.tsx';

const METERS: Array<[keyof z.infer<typeof Usage>['usage'], string]> = [
  ['devices', 'Devices'],
  ['automations', 'Automations'],
  ['config_entries', 'Integrations'],
];

/** Plan usage against its limits as bars (the active scope's, as GET /v1/billing/usage counts it), and the user's subscriptions. */
export function BillingSection() {
  const [usage, setUsage] = useState<z.infer<typeof Usage> | null>(null);
  const [subs, setSubs] = useState<Array<z.infer<typeof Subscription>> | null>(null);
  const [plans, setPlans] = useState<Map<number, string>>(new Map());
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    Promise.all([
      api('GET', '/v1/billing/usage', { schema: Usage }).then(setUsage),
      api('GET', '/v1/billing/subscriptions', { schema: z.array(Subscription) }).then(setSubs),
      api('GET', '/v1/billing/plans', { schema: z.array(Plan) }).then((p) =>
        setPlans(new Map(p.map((x) => [x.id, x.name]))),
      ),
    ]).catch((err: unknown) => setError(describe(err)));
  }, []);
  return (
    <section class="card" aria-labelledby="billing-h">
      <h2 id="billing-h">Plan and usage</h2>
      <Alert message={error} />
      {usage && (
        <>
          <p>
            Plan: <strong>{usage.plan.name}</strong>
          </p>
          <ul class="rows usage">
            {METERS.map(([key, label]) => {
              const { current, limit } = usage.usage[key];
              const text = limit === null ? `${current} (no limit)` : `${current} of ${limit}`;
              return (
                <li key={key}>
                  <span class="entity-name" id={`usage-${key}`}>
                    {label}
                  </span>
                  {limit !== null && (
                    <meter
                      aria-labelledby={`usage-${key}`}
                      min={0}
                      max={limit}
                      value={current}
                      high={limit * 0.8}
                      optimum={0}
                    >
                      {text}
                    </meter>
                  )}
                  <span class="note">{text}</span>
                </li>
              );
            })}
          </ul>
        </>
      )}
      <h3>Subscriptions</h3>
      {subs?.length === 0 && <p class="note">No subscriptions: you are on the free plan.</p>}
      <ul class="rows subscriptions">
        {subs?.map((s) => (
          <li key={s.id}>
            <span class="entity-name">{plans.get(s.plan_id) ?? `plan ${s.plan_id}`}</span>
            <span class={`badge ${s.status === 'active' ? 'online' : 'offline'}`}>{s.status}</span>
            <span class="note">
              {s.gateway_provider} · since {new Date(s.created_at).toLocaleDateString()}
              {s.expires_at
                ? ` · ${s.auto_renew ? 'renews' : 'ends'} ${new Date(s.expires_at).toLocaleDateString()}`
                : ''}
            </span>
          </li>
        ))}
      </ul>
    </section>
  );
}
