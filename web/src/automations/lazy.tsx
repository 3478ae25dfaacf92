import type { FunctionComponent } from 'preact';
import { useEffect, useState } from 'preact/hooks';

type Pages = FunctionComponent<{ path: string }>;
let loaded: Pages | null = null;

export const isAutomationsPath = (path: string) => /^\/automations(\/[^/]+)?$/.test(path);

/**
 * /automations, /automations/new and /automations/{id}, loaded on first visit: the editor, its
 * schemas and (in text.ts, later still) the YAML parser stay out of the dashboard's first load.
 */
export function AutomationsRoute({ path }: { path: string }) {
  const [Page, setPage] = useState<Pages | null>(() => loaded);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (Page) return;
    import('./pages.tsx').then(
      (m) => {
        loaded = m.AutomationsPages;
        setPage(() => m.AutomationsPages);
      },
      () => setError('The automations page could not be loaded. Reload the page to try again.'),
    );
  }, [Page]);
  if (error)
    return (
      <p class="error" role="alert">
        {error}
      </p>
    );
  if (!Page)
    return (
      <p class="note" role="status">
        Loading…
      </p>
    );
  return <Page path={path} />;
}
