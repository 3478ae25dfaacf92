import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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
it('the edge bundle leaves out the cloud-only protocol modules', async () => {
  const meta = await bundle(path.join(ROOT, 'edge/src/main.ts'), path.join(tmp, 'edge.cjs'), () => {});
  // the output's inputs that put code in it (meta.inputs also lists the modules tree-shaken away)
  const [output] = Object.values(meta.outputs);
  const inputs = Object.entries(output.inputs)
    .filter(([, i]) => i.bytesInOutput > 0)
    .map(([f]) => path.relative(ROOT, path.resolve(f)));
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
