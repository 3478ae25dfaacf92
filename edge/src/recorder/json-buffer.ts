/**
 * A growable UTF-8 buffer for writing large JSON answers without building a JS string per
 * piece: ASCII pieces are copied byte by byte in JS (no native call, no garbage), repeated
 * pieces (attribute sets) are encoded once and copied as bytes.
 */
export class JsonBuffer {
  private buf: Buffer;
  private len = 0;

  constructor(initial = 1 << 16) {
    this.buf = Buffer.allocUnsafe(initial);
  }

  private ensure(extra: number): void {
    if (this.len + extra <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.len + extra));
    this.buf.copy(next, 0, 0, this.len);
    this.buf = next;
  }

  /** a string known to be ASCII (keys, punctuation, numbers, ISO times) */
  ascii(s: string): void {
    const n = s.length;
    this.ensure(n);
    const buf = this.buf;
    let len = this.len;
    for (let i = 0; i < n; i++) buf[len++] = s.charCodeAt(i);
    this.len = len;
  }

  /** any string, as a JSON string literal (null → null) */
  jsonString(s: string | null): void {
    if (s === null) { this.ascii('null'); return; }
    // the common case (short ASCII without quotes, backslashes or control characters) in JS
    const n = s.length;
    let plain = n < 64;
    for (let i = 0; plain && i < n; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) plain = false;
    }
    if (plain) {
      this.ensure(n + 2);
      const buf = this.buf;
      let len = this.len;
      buf[len++] = 0x22;
      for (let i = 0; i < n; i++) buf[len++] = s.charCodeAt(i);
      buf[len++] = 0x22;
      this.len = len;
      return;
    }
    this.raw(JSON.stringify(s));
  }

  /** any string, written as UTF-8 */
  raw(s: string): void {
    this.ensure(s.length * 3);
    this.len += this.buf.write(s, this.len, 'utf8');
  }

  bytes(b: Buffer): void {
    const n = b.length;
    this.ensure(n);
    // small pieces: a JS loop beats Buffer#copy's argument checks
    if (n < 512) {
      const buf = this.buf;
      let len = this.len;
      for (let i = 0; i < n; i++) buf[len++] = b[i];
      this.len = len;
      return;
    }
    this.buf.set(b, this.len);
    this.len += n;
  }

  toString(): string {
    return this.buf.toString('utf8', 0, this.len);
  }
}
