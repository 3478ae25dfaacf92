import { useEffect } from 'preact/hooks';
import { takeFocusRequest } from './router.ts';

const SITE = 'Smart home';

/**
 * Per path: document.title names the page after its h1 ("<h1> · Smart home"), and after a
 * navigation the user made (not the first load, not a redirect) the h1 takes the focus, so that
 * keyboard and screen-reader users start on the new page instead of the link they followed.
 */
export function usePageHeading(path: string): void {
  useEffect(() => {
    let request = takeFocusRequest();
    const root = document.getElementById('app') ?? document.body;
    const update = () => {
      const h1 = root.querySelector<HTMLElement>('h1');
      const name = h1?.textContent?.replace(/\s+/g, ' ').trim();
      const title = name ? `${name} · ${SITE}` : SITE;
      if (document.title !== title) document.title = title;
      if (!request || !h1) return;
      const { from } = request;
      request = null;
      const now = document.activeElement;
      // something took the focus meanwhile (a panel, the user tabbing on while the page loaded): it keeps it
      if (now !== from && now && now !== document.body) return;
      // tabindex -1: focusable from script, not a Tab stop (styles.css: no ring on it)
      if (!h1.hasAttribute('tabindex')) h1.setAttribute('tabindex', '-1');
      h1.focus();
    };
    // pages show "Loading…" before their heading, and some name it after their data: the page's
    // elements coming and going are watched, and the text of the h1 itself, not every text node
    // of the page (a dashboard's live values change many times a second)
    let watched: HTMLElement | null = null;
    const headingText = new MutationObserver(update);
    const follow = () => {
      const h1 = root.querySelector<HTMLElement>('h1');
      if (h1 !== watched) {
        headingText.disconnect();
        watched = h1;
        if (h1) headingText.observe(h1, { childList: true, subtree: true, characterData: true });
      }
      update();
    };
    follow();
    const structure = new MutationObserver(follow);
    structure.observe(root, { childList: true, subtree: true });
    return () => {
      structure.disconnect();
      headingText.disconnect();
    };
  }, [path]);
}
