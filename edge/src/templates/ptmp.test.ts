import { it } from 'vitest';
import { TemplateEngine } from './template.ts';
it('x', () => {
  const e = new TemplateEngine();
  for (const s of ['{% set l = [1, 2, 3] %}', '{{ d.a[1] }}', '{% set d = {"a": l, "b": {"c": 1}} %}', '{{ x[1] }}', '{{ [1][0] }}', '{{ x.y[1] }}']) {
    try { console.log(s, JSON.stringify(e.render(s, { x: [1, 2], d: { a: [1, 2] } }))); } catch (err) { console.log(s, 'ERR', (err as Error).message); }
  }
});
