import { Callable, str } from './values.ts';

/** namespace(): the one mutable object, so `{% set ns.x = … %}` carries values out of loops. */
export class Namespace {
  readonly pyType = 'Namespace';
  private readonly values = new Map<string, unknown>();
  constructor(init: Record<string, unknown>) {
    for (const [k, v] of Object.entries(init)) this.values.set(k, v);
  }
  getAttr(name: string): unknown {
    return this.values.get(name);
  }
  set(name: string, v: unknown): void {
    this.values.set(name, v);
  }
  pyStr(): string {
    return `<Namespace ${[...this.values].map(([k, v]) => `${k}=${str(v)}`).join(', ')}>`;
  }
}

export class Loop {
  readonly pyType = 'LoopContext';
  private readonly items: unknown[];
  i = 0;
  constructor(items: unknown[]) {
    this.items = items;
  }
  getAttr(name: string): unknown {
    const len = this.items.length;
    switch (name) {
      case 'index':
        return this.i + 1;
      case 'index0':
        return this.i;
      case 'revindex':
        return len - this.i;
      case 'revindex0':
        return len - this.i - 1;
      case 'first':
        return this.i === 0;
      case 'last':
        return this.i === len - 1;
      case 'length':
        return len;
      case 'previtem':
        return this.i > 0 ? this.items[this.i - 1] : undefined;
      case 'nextitem':
        return this.i < len - 1 ? this.items[this.i + 1] : undefined;
      case 'depth':
        return 1;
      case 'cycle':
        return new Callable('cycle', (a) => (a.length ? a[this.i % a.length] : undefined));
      default:
        return undefined;
    }
  }
}

export const isNamespace = (v: unknown): v is Namespace => v instanceof Namespace;
