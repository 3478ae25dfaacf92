import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, describe } from '../api/http.ts';
import type { Card } from './card.ts';

/** Inline markdown: **bold**, *italic*, `code` and [links](https://…) (http(s) only); everything else is text. */
function inline(text: string): ComponentChildren[] {
  const out: ComponentChildren[] = [];
  const re = /\*\*([^*]+)\*\*|\*([^*]+)\*|`([^`]+)`|\[([^\]]+)\]\((https?:\/\/[^)\s]+)\)/g;
  let at = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m.index > at) out.push(text.slice(at, m.index));
    if (m[1] !== undefined) out.push(<strong>{m[1]}</strong>);
    else if (m[2] !== undefined) out.push(<em>{m[2]}</em>);
    else if (m[3] !== undefined) out.push(<code>{m[3]}</code>);
    else
      out.push(
        <a href={m[5]} rel="noopener noreferrer">
          {m[4]}
        </a>,
      );
    at = m.index + m[0].length;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}

/**
 * A small, safe markdown subset rendered as elements (never as HTML): headings, lists,
 * paragraphs and the inline forms above. What Lovelace's markdown cards mostly hold.
 */
export function Markdown({ source }: { source: string }) {
  const blocks: ComponentChildren[] = [];
  let list: string[] = [];
  let para: string[] = [];
  const flush = () => {
    if (para.length) blocks.push(<p>{inline(para.join(' '))}</p>);
    if (list.length)
      blocks.push(
        <ul>
          {list.map((item) => (
            <li>{inline(item)}</li>
          ))}
        </ul>,
      );
    para = [];
    list = [];
  };
  for (const line of source.split('\n')) {
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    const item = /^\s*[-*]\s+(.*)$/.exec(line);
    if (heading) {
      flush();
      // inside a card titled by an h2
      blocks.push(heading[1].length === 1 ? <h3>{inline(heading[2])}</h3> : <h4>{inline(heading[2])}</h4>);
    } else if (item) {
      if (para.length) flush();
      list.push(item[1]);
    } else if (!line.trim()) flush();
    else {
      if (list.length) flush();
      para.push(line.trim());
    }
  }
  flush();
  return <div class="markdown">{blocks}</div>;
}

const TEMPLATE = /\{\{|\{%/;

/**
 * Lovelace's markdown card. Its content may hold Jinja templates: they are rendered by
 * POST /api/template (the edge's engine; on the cloud over the states the caller may view), and
 * shown as written, with the API's words, where a server has no such route.
 */
export function MarkdownCard({ card }: { card: Card }) {
  const content = typeof card.content === 'string' ? card.content : '';
  const templated = TEMPLATE.test(content);
  // keyed by the content it is for: the same card slot may show another card after a view switch
  const [result, setResult] = useState<{ for: string; text: string; note: string | null } | null>(null);
  useEffect(() => {
    if (!templated) return;
    let current = true;
    api<string>('POST', '/api/template', { body: { template: content }, text: true }).then(
      (text) => current && setResult({ for: content, text, note: null }),
      (e: unknown) =>
        current && setResult({ for: content, text: content, note: `Templates are not rendered here: ${describe(e)}` }),
    );
    return () => {
      current = false;
    };
  }, [content, templated]);
  const shown = !templated ? content : result?.for === content ? result : null;
  return (
    <section class="card markdown-card">
      {typeof card.title === 'string' && <h2>{card.title}</h2>}
      {shown === null ? (
        <p class="note">Rendering…</p>
      ) : (
        <Markdown source={typeof shown === 'string' ? shown : shown.text} />
      )}
      {shown !== null && typeof shown !== 'string' && shown.note && <p class="note">{shown.note}</p>}
    </section>
  );
}
