// static imports, so esbuild bundles them into the one-file edge (a require() it cannot follow)
import lexerModule from 'nunjucks/src/lexer.js';
import nodesModule from 'nunjucks/src/nodes.js';
import parserModule from 'nunjucks/src/parser.js';

/**
 * Jinja source → syntax tree, with nunjucks' (Jinja-compatible) lexer and parser, corrected
 * where Jinja differs: `* / // %` share one left-associative level (nunjucks nests them, so
 * `2 * 7 // 2` was `2 * (7 // 2)`), so do `+ -`; `a[1:2]` slices; float literals stay floats
 * (`1.0` prints as 1.0); `{% break %}`, `{% continue %}` and `{% do %}` (Home Assistant
 * enables Jinja's loopcontrols and do extensions). Only the tree is used: nunjucks' compiler
 * (which generates JavaScript) is never loaded; interpreter.ts walks the tree instead, so no
 * identifier from a template can ever reach generated code.
 */

export interface Node {
  typename: string;
  lineno: number;
  colno: number;
  value?: unknown;
  children?: Node[];
  [field: string]: unknown;
}

interface Token {
  type: string;
  value: string;
  lineno: number;
  colno: number;
}
interface ParserLike {
  tokens: { index: number; lineno: number; colno: number };
  peeked: Token | null | false;
  extensions: unknown[];
  peekToken(): Token;
  nextToken(): Token;
  skip(type: string): boolean;
  skipValue(type: string, value: string): boolean;
  skipSymbol(name: string): boolean;
  advanceAfterBlockEnd(name?: string): void;
  parseExpression(): Node;
  parseUnary(noFilters?: boolean): Node;
  parsePow(): Node;
  parseMul(): Node;
  parseSignature(): Node;
  parseAggregate(): Node;
  fail(msg: string, lineno?: number, colno?: number): never;
  parseAsRoot(): Node;
}
type NodeCtor = new (lineno: number, colno: number, ...args: unknown[]) => Node;

const lexer = lexerModule as {
  lex(src: string, opts: object): unknown;
  TOKEN_OPERATOR: string;
  TOKEN_COLON: string;
  TOKEN_RIGHT_BRACKET: string;
  TOKEN_LEFT_BRACKET: string;
  TOKEN_LEFT_PAREN: string;
  TOKEN_FLOAT: string;
  TOKEN_BLOCK_END: string;
};
const nodes = nodesModule as Record<string, NodeCtor>;
const { Parser } = parserModule as { Parser: new (tokens: unknown) => ParserLike };
const base = Parser.prototype as unknown as Record<string, (this: ParserLike, ...a: unknown[]) => Node>;

/** Plain tree node for what nunjucks has no class for (Slice, LoopControl, Do). */
function node(typename: string, lineno: number, colno: number, fields: Record<string, unknown>): Node {
  return { typename, lineno, colno, ...fields };
}

class JinjaParser extends (Parser as unknown as new (tokens: unknown) => ParserLike) {
  // Jinja's levels: `+ -` below `~` below `* / // %` (so `1 + 2 ~ 3` is `1 + (2 ~ 3)`)
  parseConcat(): Node {
    return this.parseAdd();
  }

  parseAdd(): Node {
    let left = this.parseTilde();
    for (;;) {
      if (this.skipValue(lexer.TOKEN_OPERATOR, '+'))
        left = new nodes.Add!(left.lineno, left.colno, left, this.parseTilde());
      else if (this.skipValue(lexer.TOKEN_OPERATOR, '-'))
        left = new nodes.Sub!(left.lineno, left.colno, left, this.parseTilde());
      else return left;
    }
  }

  parseTilde(): Node {
    let left = this.parseMul();
    while (this.skipValue('tilde', '~')) left = new nodes.Concat!(left.lineno, left.colno, left, this.parseMul());
    return left;
  }

  // nunjucks chains parseAdd → parseSub → parseMul; parseSub is folded into parseAdd above
  parseSub(): Node {
    return this.parseMul();
  }

  override parseMul(): Node {
    let left = this.parsePow();
    const ops: [string, string][] = [
      ['*', 'Mul'],
      ['/', 'Div'],
      ['//', 'FloorDiv'],
      ['%', 'Mod'],
    ];
    for (;;) {
      const op = ops.find(([sym]) => this.skipValue(lexer.TOKEN_OPERATOR, sym));
      if (!op) return left;
      left = new nodes[op[1]]!(left.lineno, left.colno, left, this.parsePow());
    }
  }

  /** nunjucks' postfix parser, marking `a.b` (attribute first, as Jinja looks up) apart from `a['b']` (item first). */
  parsePostfix(target: Node): Node {
    let n = target;
    for (let tok = this.peekToken(); tok; tok = this.peekToken()) {
      if (tok.type === lexer.TOKEN_LEFT_PAREN) {
        n = new nodes.FunCall!(tok.lineno, tok.colno, n, this.parseSignature());
      } else if (tok.type === lexer.TOKEN_LEFT_BRACKET) {
        const lookup = this.parseAggregate();
        if (lookup.children!.length !== 1) this.fail('invalid index', tok.lineno, tok.colno);
        n = new nodes.LookupVal!(tok.lineno, tok.colno, n, lookup.children![0]);
      } else if (tok.type === lexer.TOKEN_OPERATOR && tok.value === '.') {
        this.nextToken();
        const name = this.nextToken();
        if (name?.type !== 'symbol')
          this.fail(`expected name as lookup value, got ${name?.value}`, tok.lineno, tok.colno);
        n = new nodes.LookupVal!(tok.lineno, tok.colno, n, new nodes.Literal!(name.lineno, name.colno, name.value));
        n.dot = true;
      } else {
        return n;
      }
    }
    return n;
  }

  parsePrimary(noPostfix?: boolean): Node {
    const tok = this.peekToken();
    const n = base.parsePrimary!.call(this, noPostfix);
    if (tok?.type === lexer.TOKEN_FLOAT && n.typename === 'Literal' && typeof n.value === 'number') n.float = true;
    return n;
  }

  /** `[a:b:c]` after an expression: nunjucks' own aggregate parser fails at the colon. */
  override parseAggregate(): Node {
    const tok = this.peekToken();
    if (tok?.type !== lexer.TOKEN_LEFT_BRACKET) return base.parseAggregate!.call(this);
    const state = { index: this.tokens.index, lineno: this.tokens.lineno, colno: this.tokens.colno };
    const peeked = this.peeked;
    try {
      return base.parseAggregate!.call(this);
    } catch (err) {
      Object.assign(this.tokens, state);
      this.peeked = peeked;
      this.nextToken(); // [
      const parts: (Node | null)[] = [null, null, null];
      let part = 0;
      let isSlice = false;
      while (!this.skip(lexer.TOKEN_RIGHT_BRACKET)) {
        if (this.skip(lexer.TOKEN_COLON)) {
          isSlice = true;
          if (++part > 2) this.fail('too many slice components', tok.lineno, tok.colno);
          continue;
        }
        if (parts[part]) this.fail('expected : or ] in slice', tok.lineno, tok.colno);
        parts[part] = this.parseExpression();
      }
      if (!isSlice) throw err;
      return new nodes.Array!(tok.lineno, tok.colno, [
        node('Slice', tok.lineno, tok.colno, { start: parts[0], stop: parts[1], step: parts[2] }),
      ]);
    }
  }
}

/** Home Assistant's Jinja extensions: loopcontrols (break, continue) and do. */
const extensions = [
  {
    tags: ['break', 'continue', 'do'],
    parse(parser: ParserLike): Node {
      const tok = parser.nextToken();
      if (tok.value === 'do') {
        const expr = parser.parseExpression();
        parser.advanceAfterBlockEnd(tok.value);
        return node('Do', tok.lineno, tok.colno, { expr });
      }
      parser.advanceAfterBlockEnd(tok.value);
      return node('LoopControl', tok.lineno, tok.colno, { kind: tok.value });
    },
  },
];

interface TokenizerLike {
  str: string;
  index: number;
  in_code: boolean;
  lineno: number;
  colno: number;
  nextToken(): Token | null;
  forward(): void;
}

/**
 * nunjucks' tokenizer, corrected where Jinja lexes differently: `}}` inside braces closes the
 * braces, not the tag (`{% set d = {'a': {'b': 1}} %}`); `r/…/` is a name followed by a
 * division, not a JavaScript regex; `1e3` is a float.
 */
function jinjaTokens(source: string): TokenizerLike {
  const t = lexer.lex(source, {}) as TokenizerLike;
  const next = t.nextToken.bind(t);
  let curly = 0;
  t.nextToken = () => {
    const { lineno, colno } = t;
    if (t.in_code && curly > 0 && t.str[t.index] === '}') {
      t.forward();
      curly--;
      return { type: 'right-curly', value: '}', lineno, colno };
    }
    const quote = t.str[t.index];
    if (t.in_code && (quote === '"' || quote === "'"))
      return { type: 'string', value: pythonString(t, quote), lineno, colno };
    if (t.in_code && t.str[t.index] === 'r' && t.str[t.index + 1] === '/' && !/\w/.test(t.str[t.index - 1] ?? '')) {
      t.forward();
      return { type: 'symbol', value: 'r', lineno, colno };
    }
    const tok = next();
    if (!tok) return tok;
    if (tok.type === 'left-curly') curly++;
    else if (tok.type === 'right-curly') curly--;
    else if (tok.type === 'variable-end' || tok.type === 'block-end') curly = 0;
    else if (tok.type === 'symbol' && /^\d+(\.\d*)?[eE]\d+$/.test(tok.value)) return { ...tok, type: 'float' };
    else if (tok.type === 'symbol' && /^\d+(\.\d*)?[eE]$/.test(tok.value)) {
      const exp = /^[+-]\d+/.exec(t.str.slice(t.index, t.index + 8));
      if (exp) for (let i = 0; i < exp[0].length; i++) t.forward();
      return { ...tok, type: 'float', value: tok.value + (exp?.[0] ?? '') };
    } else if (tok.type === 'int' || tok.type === 'float') {
      const exp = /^[eE][+-]?\d+/.exec(t.str.slice(t.index, t.index + 8));
      if (exp) {
        for (let i = 0; i < exp[0].length; i++) t.forward();
        return { ...tok, type: 'float', value: tok.value + exp[0] };
      }
    }
    return tok;
  };
  return t;
}

const ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  '\\': '\\',
  "'": "'",
  '"': '"',
  a: '\x07',
  b: '\b',
  f: '\f',
  v: '\v',
  '0': '\0',
  '\n': '',
};

/** A string literal as Python reads it: unknown escapes such as `\d` keep their backslash (regexes rely on it). */
function pythonString(t: TokenizerLike, quote: string): string {
  t.forward();
  let out = '';
  while (t.index < t.str.length && t.str[t.index] !== quote) {
    const c = t.str[t.index]!;
    if (c !== '\\') {
      out += c;
      t.forward();
      continue;
    }
    const n = t.str[t.index + 1] ?? '';
    const hex = n === 'x' ? 2 : n === 'u' ? 4 : n === 'U' ? 8 : 0;
    const digits = hex ? t.str.slice(t.index + 2, t.index + 2 + hex) : '';
    if (hex && new RegExp(`^[0-9a-fA-F]{${hex}}$`).test(digits)) {
      out += String.fromCodePoint(parseInt(digits, 16));
      for (let i = 0; i < hex + 2; i++) t.forward();
    } else if (Object.hasOwn(ESCAPES, n)) {
      out += ESCAPES[n];
      t.forward();
      t.forward();
    } else {
      out += c + n;
      t.forward();
      t.forward();
    }
  }
  if (t.index >= t.str.length) throw new ParseError('unterminated string');
  t.forward();
  return out;
}

export class ParseError extends Error {}

/** Parses a template; throws ParseError with nunjucks' message (line and column) when it does not parse. */
export function parseTemplate(source: string): Node {
  const p = new JinjaParser(jinjaTokens(source));
  p.extensions = extensions;
  try {
    return p.parseAsRoot();
  } catch (err) {
    throw new ParseError(
      (err as Error).message
        .replace(/^\(unknown path\)\s*/, '')
        .replace(/\s+/g, ' ')
        .trim(),
    );
  }
}
