import { useEffect, useState } from 'preact/hooks';

/** A tiny history router: the servers answer every portal path with the page (SPA fallback). */
const listeners = new Set<() => void>();

/**
 * Set by a navigation the user made (a link followed, a history step), with where the focus was:
 * the new page's heading takes the focus (heading.ts). A replace (a redirect) sets none.
 */
let focusRequest: { from: Element | null } | null = null;

/** The pending request to focus the new page's heading, once. */
export function takeFocusRequest(): { from: Element | null } | null {
  const r = focusRequest;
  focusRequest = null;
  return r;
}

export function navigate(to: string, replace = false): void {
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  focusRequest = replace ? null : { from: document.activeElement };
  for (const l of listeners) l();
  window.scrollTo(0, 0);
}

addEventListener('popstate', () => {
  focusRequest = { from: document.activeElement };
  for (const l of listeners) l();
});

export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const l = () => setPath(location.pathname);
    listeners.add(l);
    return () => {
      listeners.delete(l);
    };
  }, []);
  return path;
}

/** Follows a link without reloading (modifier keys still open a new tab). */
export function onLink(e: MouseEvent): void {
  const a = e.currentTarget as HTMLAnchorElement;
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  e.preventDefault();
  navigate(a.getAttribute('href') ?? '/');
}

/** Where sign-in or register return to: ?next= (same-origin paths only), else the page asked for (with its query), else the dashboard. */
export function nextPath(): string {
  const next = new URLSearchParams(location.search).get('next');
  if (next && next.startsWith('/') && !next.startsWith('//')) return next;
  // a deep link keeps its query: the mails' links carry their token there (/transfers/… has none, invitations do)
  return ['/signin', '/register', '/onboarding'].includes(location.pathname)
    ? '/'
    : location.pathname + location.search;
}
