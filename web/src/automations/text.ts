/**
 * The editor's text: an automation as YAML or JSON, parse errors with their line, and the line
 * an API validation message points at. The `yaml` package is imported only here, on demand, so
 * neither the dashboard nor the automations list pays for it.
 */
export type Mode = 'yaml' | 'json';
export type PathSegment = string | number;

/** A problem placed on a line of the text (1-based); line null: the text as a whole. */
export class TextError extends Error {
  readonly line: number | null;
  constructor(message: string, line: number | null) {
    super(message);
    this.line = line;
  }
}

const yamlLib = () => import('yaml');

export async function toText(value: unknown, mode: Mode): Promise<string> {
  if (mode === 'json') return `${JSON.stringify(value, null, 2)}\n`;
  const { stringify } = await yamlLib();
  return stringify(value, { lineWidth: 0 });
}

/** The definition the text holds (a mapping), or a TextError on the line the parser names. */
export async function fromText(text: string, mode: Mode): Promise<Record<string, unknown>> {
  let value: unknown;
  if (mode === 'json') {
    try {
      value = JSON.parse(text);
    } catch (err) {
      const message = (err as Error).message;
      throw new TextError(message, jsonErrorLine(text, message));
    }
  } else {
    const { parseDocument } = await yamlLib();
    const doc = parseDocument(text, { prettyErrors: true });
    const first = doc.errors[0];
    if (first) throw new TextError(first.message.split('\n')[0], first.linePos?.[0].line ?? null);
    value = doc.toJS();
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new TextError('The automation must be a mapping (alias, trigger, action, …).', 1);
  return value as Record<string, unknown>;
}

/** V8 words JSON errors "… (line 3 column 5)" or "… at position 42". */
function jsonErrorLine(text: string, message: string): number | null {
  const line = /line (\d+)/.exec(message);
  if (line) return Number(line[1]);
  const pos = /position (\d+)/.exec(message);
  return pos ? lineAt(text, Number(pos[1])) : null;
}

const lineAt = (text: string, offset: number) => text.slice(0, offset).split('\n').length;

/**
 * The API's 400 messages start with the field they are about, as `trigger[0].platform: …`
 * (protocol's describeZodError and the edge's validate.ts): split it off.
 */
export function splitPath(message: string): { path: PathSegment[]; text: string } | null {
  const m = /^([A-Za-z_][\w]*(?:\[\d+\]|\.[A-Za-z_][\w]*)*): (.*)$/s.exec(message);
  if (!m) return null;
  const path: PathSegment[] = [];
  for (const part of m[1].matchAll(/([A-Za-z_]\w*)|\[(\d+)\]/g))
    path.push(part[1] !== undefined ? part[1] : Number(part[2]));
  return { path, text: m[2] };
}

/**
 * The API reports paths in its own spelling after normalizing Home Assistant's (`triggers:`,
 * `trigger: state`, `action: light.turn_on`): the spellings the text may use instead.
 */
const SPELLINGS: Record<string, string[]> = {
  trigger: ['trigger', 'triggers'],
  condition: ['condition', 'conditions'],
  action: ['action', 'actions'],
  platform: ['platform', 'trigger'],
  service: ['service', 'action'],
};

/**
 * The line (1-based) of the deepest part of `path` the text has: the key of a mapping entry or
 * the start of a list item. JSON is YAML, so one walk serves both modes. `x` written for `[x]`
 * (the API accepts a single trigger or action) is followed through index 0.
 */
export async function lineOfPath(text: string, path: PathSegment[]): Promise<number> {
  const { parseDocument, isMap, isSeq, isScalar } = await yamlLib();
  const doc = parseDocument(text);
  let node: unknown = doc.contents;
  let offset = (doc.contents?.range?.[0] as number | undefined) ?? 0;
  for (const seg of path) {
    if (isSeq(node)) {
      const item = typeof seg === 'number' ? node.items[seg] : undefined;
      if (!item) break;
      node = item;
      offset = (item as { range?: [number] }).range?.[0] ?? offset;
    } else if (isMap(node)) {
      if (typeof seg === 'number') {
        if (seg === 0) continue;
        break;
      }
      const names = SPELLINGS[seg] ?? [seg];
      const pair = node.items.find((p) => names.includes(String(isScalar(p.key) ? p.key.value : p.key)));
      if (!pair) break;
      node = pair.value;
      offset = (pair.key as { range?: [number] } | null)?.range?.[0] ?? offset;
    } else break;
  }
  return lineAt(text, offset);
}
