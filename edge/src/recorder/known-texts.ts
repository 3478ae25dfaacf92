/**
 * Characters of set texts kept in memory (~4 MB at one byte a character), all entities together, so
 * that a set coming back is recognised by its text without reading the stored one; past this a
 * set is checked against the stored text (a query).
 */
const KNOWN_TEXT_CHARS = 4_000_000;

/** The recorder store's attribute set texts by entity and hash, bounded by KNOWN_TEXT_CHARS in all. */
export class KnownTexts {
  private readonly texts = new Map<number, Map<number, string>>();
  private chars = 0;

  get(metadataId: number, hash: number): string | undefined {
    return this.texts.get(metadataId)?.get(hash);
  }

  remember(metadataId: number, hash: number, text: string): void {
    let texts = this.texts.get(metadataId);
    const old = texts?.get(hash);
    if (old !== undefined) this.chars -= old.length;
    else if (this.chars + text.length > KNOWN_TEXT_CHARS) return;
    if (texts === undefined) this.texts.set(metadataId, (texts = new Map()));
    texts.set(hash, text);
    this.chars += text.length;
  }

  drop(metadataId: number, hash: number): void {
    const texts = this.texts.get(metadataId);
    const old = texts?.get(hash);
    if (old === undefined) return;
    this.chars -= old.length;
    texts!.delete(hash);
  }

  /** Forgets an entity's texts. */
  forget(metadataId: number): void {
    const texts = this.texts.get(metadataId);
    if (texts === undefined) return;
    for (const text of texts.values()) this.chars -= text.length;
    this.texts.delete(metadataId);
  }

  clear(): void {
    this.texts.clear();
    this.chars = 0;
  }
}

/** 32-bit FNV-1a over UTF-16 code units: fast, and collisions only cost a text comparison. */
export function fnv1a32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
