import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';

let t: TestCloud;
beforeAll(async () => {
  t = await startTestCloud();
});
afterAll(async () => {
  await t.stop();
});

describe('OpenAPI', () => {
  it('documents every zone, dashboard, transfer and VoIP route with its schemas', async () => {
    const doc = (await t.get('/openapi.json')).body;
    const expected: [string, string, number][] = [
      ['/v1/zones', 'post', 201],
      ['/v1/zones', 'get', 200],
      ['/v1/zones/{id}', 'get', 200],
      ['/v1/zones/{id}', 'patch', 200],
      ['/v1/zones/{id}', 'delete', 200],
      ['/v1/ui-dashboard', 'put', 200],
      ['/v1/ui-dashboard', 'get', 200],
      ['/v1/ui-dashboard/{id}', 'get', 200],
      ['/v1/ui-dashboard/{id}', 'delete', 200],
      ['/v1/transfers', 'post', 201],
      ['/v1/transfers', 'get', 200],
      ['/v1/transfers/{id}/accept', 'post', 200],
      ['/v1/transfers/{id}/decline', 'post', 200],
      ['/v1/transfers/{id}/cancel', 'post', 200],
      ['/v1/voip-accounts', 'post', 201],
      ['/v1/voip-accounts', 'get', 200],
      ['/v1/voip-accounts/{id}', 'delete', 200],
    ];
    for (const [p, method, status] of expected) {
      const op = doc.paths[p]?.[method];
      expect(op, `${method} ${p}`).toBeDefined();
      expect(op.responses[String(status)]).toBeDefined();
      expect(op.responses['401'].content['application/json'].schema).toEqual({
        $ref: '#/components/schemas/ErrorCode',
      });
    }
    expect(doc.paths['/v1/zones'].post.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/CreateZone',
    });
    expect(doc.paths['/v1/zones'].post.parameters.map((x: any) => x.name)).toContain('x-organization-id');
    expect(doc.components.schemas.VoipAccount.properties.password).toBeUndefined();
    expect(doc.components.schemas.Transfer.properties.status.enum).toEqual([
      'pending',
      'accepted',
      'declined',
      'cancelled',
      'expired',
    ]);
  });
});
