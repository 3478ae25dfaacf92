import type { OutputGuard } from './output-guard.ts';
import { dateArith, durationScale } from './timedelta.ts';
import { percentFormat } from './format.ts';
import { RenderError, float, isFloat, isList, isNum, isTuple, num, tuple, typeName } from './values.ts';

/** Python arithmetic: int stays int, float is contagious, `/` is true division; str and list + and *. */
export function arith(ctx: OutputGuard, op: string, a: unknown, b: unknown): unknown {
  const an = isNum(a) || typeof a === 'boolean';
  const bn = isNum(b) || typeof b === 'boolean';
  if (an && bn) {
    const x = Number(typeof a === 'boolean' ? Number(a) : num(a as number));
    const y = Number(typeof b === 'boolean' ? Number(b) : num(b as number));
    const fl = isFloat(a) || isFloat(b);
    const out = (n: number) => (fl ? float(n) : n);
    switch (op) {
      case 'Add':
        return out(x + y);
      case 'Sub':
        return out(x - y);
      case 'Mul':
        return out(x * y);
      case 'Div':
        if (y === 0) throw new RenderError('division by zero');
        return float(x / y);
      case 'FloorDiv':
        if (y === 0) throw new RenderError('integer division or modulo by zero');
        return out(Math.floor(x / y));
      case 'Mod': {
        if (y === 0) throw new RenderError('integer division or modulo by zero');
        const m = x % y;
        return out(m !== 0 && m < 0 !== y < 0 ? m + y : m);
      }
      case 'Pow': {
        const p = x ** y;
        if (!Number.isFinite(p) && Number.isFinite(x) && Number.isFinite(y)) throw new RenderError('result too large');
        return fl || y < 0 ? float(p) : p;
      }
    }
  }
  if (op === 'Add' || op === 'Sub') {
    const d = dateArith(op === 'Add' ? '+' : '-', a, b);
    if (d !== undefined) return d;
  }
  if (op === 'Mul' || op === 'Div') {
    const d = durationScale(op === 'Mul' ? '*' : '/', a, b);
    if (d !== undefined) return d;
  }
  if (op === 'Add' && typeof a === 'string' && typeof b === 'string') return ctx.checkString(a + b);
  if (op === 'Add' && isList(a) && isList(b)) {
    if (a.length + b.length > ctx.limits.maxOutput) throw new RenderError(`list longer than ${ctx.limits.maxOutput}`);
    return isTuple(a) && isTuple(b) ? tuple([...a, ...b]) : [...a, ...b];
  }
  if (op === 'Mul' && (typeof a === 'string' || isList(a)) && isNum(b) && !isFloat(b)) return repeat(ctx, a, num(b));
  if (op === 'Mul' && (typeof b === 'string' || isList(b)) && isNum(a) && !isFloat(a)) return repeat(ctx, b, num(a));
  if (op === 'Mod' && typeof a === 'string') return ctx.checkString(percentFormat(a, b));
  const sym = { Add: '+', Sub: '-', Mul: '*', Div: '/', FloorDiv: '//', Mod: '%', Pow: '**' }[op];
  throw new RenderError(`unsupported operand type(s) for ${sym}: '${typeName(a)}' and '${typeName(b)}'`);
}

function repeat(ctx: OutputGuard, v: string | unknown[], n: number): unknown {
  if (n <= 0) return typeof v === 'string' ? '' : [];
  if (v.length * n > ctx.limits.maxOutput) throw new RenderError(`result longer than ${ctx.limits.maxOutput}`);
  return typeof v === 'string' ? v.repeat(n) : Array.from({ length: n }, () => v).flat();
}
