import { useEffect, useState } from 'preact/hooks';
import { z } from 'zod';
import { OrganizationWithRole } from '@smarthome/protocol/orgs';
import { api, describe } from '../api/http.ts';
import { session } from '../api/session.ts';

type Org = z.infer<typeof OrganizationWithRole>;

const GONE =
  'The workspace you had chosen is no longer yours (you were removed from it, or it was deleted). Showing Personal.';

/**
 * The cloud portal's workspace: Personal or one of the user's organizations. The choice is the
 * session's `org` (sent as X-Organization-Id and in the live socket's auth); the shell re-mounts the
 * page when it changes. `path` re-reads the list on navigation, so an organization just created or
 * joined shows up, and one the user was removed from is noticed.
 */
export function ScopeSwitcher({ org, path }: { org: string | null; path: string }) {
  const [orgs, setOrgs] = useState<Org[] | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    // org: null: the list of every organization, whatever the active scope (a scope the user lost would 403)
    api('GET', '/v1/organizations', { schema: z.array(OrganizationWithRole), org: null }).then(
      (list) => {
        if (!live) return;
        setOrgs(list);
        const active = session.get()?.org ?? null;
        if (active && !list.some((o) => o.id === active)) {
          session.update({ org: null });
          setNotice(GONE);
        }
      },
      (e: unknown) => live && setNotice(`The workspaces could not be loaded: ${describe(e)}`),
    );
    return () => {
      live = false;
    };
  }, [path]);
  const choose = (value: string) => {
    setNotice(null);
    session.update({ org: value || null });
  };
  return (
    <>
      <label class="scope" style={{ display: 'flex', alignItems: 'center', gap: '0.4rem' }}>
        Workspace
        <select value={org ?? ''} onChange={(e) => choose(e.currentTarget.value)}>
          <option value="">Personal</option>
          {/* the chosen one before the list arrives: the select shows it rather than jumping to Personal */}
          {org && !orgs?.some((o) => o.id === org) && <option value={org}>Loading…</option>}
          {orgs?.map((o) => (
            <option key={o.id} value={o.id}>
              {o.name}
            </option>
          ))}
        </select>
      </label>
      {notice && (
        <p class="error" role="alert" style={{ flexBasis: '100%', order: 1, margin: 0 }}>
          {notice}
        </p>
      )}
    </>
  );
}
