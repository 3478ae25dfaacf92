import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { ROOT, bundle } from './build.ts';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'edge-bundle-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/**
 * Every zod schema in a bundled module is built when the executable starts, used or not, so the
 * edge must not carry the cloud's protocol modules (#19: the edge's RSS). They stay out because
 * protocol/package.json says `"sideEffects": false` and the edge imports route specs from their
 * own modules, never through the `routes` namespace.
 */
const edgeFile = path.join(tmp, 'edge.cjs');
/** The bundle's inputs that put code in it (meta.inputs also lists the modules tree-shaken away). */
let bundled: Promise<string[]> | null = null;
const bundledInputs = () =>
  (bundled ??= bundle(path.join(ROOT, 'edge/src/main.ts'), edgeFile, () => {}).then((meta) =>
    Object.entries(Object.values(meta.outputs)[0].inputs)
      .filter(([, i]) => i.bytesInOutput > 0)
      .map(([f]) => path.relative(ROOT, path.resolve(f))),
  ));

it('the edge bundle leaves out the cloud-only protocol modules', async () => {
  const inputs = await bundledInputs();
  const protocol = inputs.filter((f) => f.startsWith('protocol/src/'));
  // what the edge does use is there
  expect(protocol).toContain('protocol/src/tunnel.ts');
  expect(protocol).toContain('protocol/src/automations.ts');
  expect(protocol).toContain('protocol/src/routes/automations.ts');
  for (const cloudOnly of [
    'protocol/src/routes/index.ts',
    'protocol/src/routes/orgs.ts',
    'protocol/src/routes/billing.ts',
    'protocol/src/routes/store-iap.ts',
    'protocol/src/routes/transfers.ts',
    'protocol/src/billing.ts',
    'protocol/src/voip.ts',
    'protocol/src/store-iap.ts',
    'protocol/src/transfers.ts',
    'protocol/src/orgs.ts',
  ])
    expect(protocol).not.toContain(cloudOnly);
}, 60_000);

/** zod's other 49 locales were ~300 kB of the script (build.ts zodEnglishOnlyPlugin). */
it('the edge bundle carries only the English locale of zod, whose messages stay as they were', async () => {
  const locales = (await bundledInputs()).filter((f) => /zod\/v4\/locales\/[^/]+\.js$/.test(f));
  expect(locales.map((f) => path.basename(f)).sort()).toEqual(['en.js', 'index.js']);
  // zod bundled the same way on its own
  const probe = path.join(tmp, 'zod-probe.mjs');
  writeFileSync(probe, `export { z } from ${JSON.stringify(fileURLToPath(import.meta.resolve('zod')))};\n`);
  await bundle(probe, path.join(tmp, 'zod-probe.cjs'), () => {});
  const { z } = createRequire(import.meta.url)(path.join(tmp, 'zod-probe.cjs')) as typeof import('zod');
  expect(Object.keys(z.locales)).toEqual(['en']);
  const result = z.object({ n: z.number().min(2) }).safeParse({ n: 1 });
  expect(result.success ? null : result.error.issues[0].message).toBe('Too small: expected number to be >=2');
}, 60_000);
