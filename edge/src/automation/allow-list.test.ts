import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Edge } from '../edge.ts';
import { startEdge, tempDir, waitFor } from '../testing/edge.ts';

/** A cloud replica edge started with --call-url-allow: the allow-listed LAN target is reachable, nothing else private is. */

function listen(
  host: string,
  handler: http.RequestListener,
): Promise<{ server: http.Server; url: string; hits: string[] }> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    handler(req, res);
  });
  return new Promise((resolve) =>
    server.listen(0, host, () =>
      resolve({ server, hits, url: `http://${host}:${(server.address() as AddressInfo).port}` }),
    ),
  );
}

describe('a cloud replica with a call_url allow-list', () => {
  const dir = tempDir();
  let edge: Edge;
  let allowed: Awaited<ReturnType<typeof listen>>;
  let other: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    other = await listen('127.0.0.2', (_req, res) => res.end('other'));
    allowed = await listen('127.0.0.1', (req, res) => {
      if (req.url === '/redirect') {
        res.writeHead(302, { location: `${other.url}/stolen` });
        res.end();
        return;
      }
      res.end('allowed');
    });
    edge = await startEdge(dir.dir, { cloudReplica: true, callUrlAllow: ['127.0.0.1'] });
  });
  afterAll(async () => {
    await edge.stop();
    allowed.server.close();
    other.server.close();
    dir.cleanup();
  });

  async function runCallUrl(url: string) {
    const automation = await edge.features.automations.create({
      alias: url,
      mode: 'parallel',
      enabled: true,
      trigger: [{ platform: 'webhook' }],
      condition: [],
      action: [{ call_url: { method: 'GET', url } }],
    } as Parameters<Edge['features']['automations']['create']>[0]);
    expect(edge.features.automations.handleWebhook(automation.webhook_id!, {}, 'cloud').status).toBe(200);
    return waitFor(
      () => edge.features.automations.traces(automation.id).find((t) => t.state !== 'running'),
      5000,
      'the run to end',
    );
  }

  it('reaches the allow-listed private address', async () => {
    const trace = await runCallUrl(`${allowed.url}/hello`);
    expect([trace.state, trace.error]).toEqual(['finished', null]);
    expect(allowed.hits).toContain('/hello');
  });

  it('still refuses other private addresses, directly and after a redirect from the allowed one', async () => {
    const direct = await runCallUrl(`${other.url}/direct`);
    expect(direct.state).toBe('failed');
    expect(direct.error).toContain('non-public address (127.0.0.2)');
    const redirected = await runCallUrl(`${allowed.url}/redirect`);
    expect(redirected.state).toBe('failed');
    expect(redirected.error).toContain('non-public address (127.0.0.2)');
    expect(allowed.hits).toContain('/redirect');
    expect(other.hits).toEqual([]);
    const metadata = await runCallUrl('http://169.254.169.254/latest/meta-data/');
    expect(metadata.error).toContain('non-public address (169.254.169.254)');
  });
});
