import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, spawnReady } from '@smarthome/cloud/testing/process';
import { buildCloud, type CloudBuildResult } from './build.ts';

/**
 * The bundled cloud (`pnpm build:cloud`) is the same product as the sources: it starts on an
 * empty data dir, registers, signs in, reads the certificate it ships beside it, and stops on
 * SIGTERM with exit 0. Built into a folder of its own inside cloud/ so better-sqlite3 resolves.
 */
const outDir = fs.mkdtempSync(path.join(REPO_ROOT, 'cloud', '.bundle-test-'));
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cloud-bundle-'));
let built: CloudBuildResult;

beforeAll(async () => {
  built = await buildCloud(path.join(outDir, 'smarthome-cloud.mjs'));
}, 120_000);
afterAll(() => {
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const postJson = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('pnpm build:cloud', () => {
  it('writes one module and the files the cloud reads at run time', () => {
    expect(built.bytes).toBeGreaterThan(100_000);
    expect(fs.readdirSync(outDir).sort()).toEqual(['apple-root-ca-g3.pem', 'smarthome-cloud.mjs']);
  });

  it('runs: ready, register, sign in, account, OpenAPI, then exit 0 on SIGTERM', async () => {
    const script = path.relative(REPO_ROOT, built.file);
    const p = await spawnReady(script, ['--port', '0', '--data-dir', dataDir], {}, 60_000);
    const base = `http://127.0.0.1:${p.ready.http}`;
    expect(
      (await postJson(`${base}/v1/auth/register`, { email: 'bundle@example.test', password: 'password123' })).status,
    ).toBe(201);
    const login = await postJson(`${base}/v1/auth/token`, {
      grant_type: 'password',
      email: 'bundle@example.test',
      password: 'password123',
    });
    expect(login.status).toBe(200);
    const { access_token } = (await login.json()) as { access_token: string };
    const account = await fetch(`${base}/v1/account`, { headers: { authorization: `Bearer ${access_token}` } });
    expect(await account.json()).toMatchObject({ email: 'bundle@example.test' });
    const openapi = (await (await fetch(`${base}/openapi.json`)).json()) as {
      openapi: string;
      paths: Record<string, unknown>;
    };
    expect(openapi.openapi).toMatch(/^3\.1/);
    expect(Object.keys(openapi.paths)).toContain('/v1/account');
    // the API reference's Swagger UI files, resolved from the bundle's place (cloud/node_modules)
    const docs = await (await fetch(`${base}/docs`)).text();
    const css = docs.match(/href="(\/docs\/swagger-ui-[^"]+\.css)"/)?.[1];
    expect(css).toBeDefined();
    expect(await (await fetch(`${base}${css}`)).text()).toContain('.swagger-ui');
    // the portal, found in web/dist from the bundle (the test command builds web/dist first)
    if (fs.existsSync(path.join(REPO_ROOT, 'web/dist/index.html'))) {
      const page = await fetch(`${base}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<div id="app"');
    }
    p.child.kill('SIGTERM');
    expect(await p.exit).toBe(0);
  }, 120_000);
});
