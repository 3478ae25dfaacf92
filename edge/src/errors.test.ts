import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineRoute } from '@smarthome/protocol';
import { z } from 'zod';
import { AutomationError } from './automation/engine.ts';
import {
  ConflictError,
  EdgeError,
  InvalidInputError,
  NotFoundError,
  ServiceError,
  type EdgeErrorKind,
} from './errors.ts';
import { ServiceCallError, UnknownEntityError } from './services/services.ts';
import { serveRoutes, type TestServer } from './testing/server.ts';

/** A class outside the family, as a newcomer might add one. */
class SomethingNewError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SomethingNewError';
  }
}

const THROWN: Record<string, () => Error> = {
  invalid_input: () => new EdgeError('invalid_input', 'kind invalid_input'),
  not_found: () => new EdgeError('not_found', 'kind not_found'),
  conflict: () => new EdgeError('conflict', 'kind conflict'),
  conflict_error: () => new ConflictError('MQTT user dev1 already exists'),
  not_found_error: () => new NotFoundError('no discovery config on x'),
  invalid_input_error: () => new InvalidInputError('MQTT user nobody not found'),
  service_error: () => new ServiceError('brightness must be at most 255'),
  unknown_entity: () => new UnknownEntityError('light.nope'),
  service_call: () => new ServiceCallError('service light.fly is not supported'),
  automation_invalid: () => new AutomationError('invalid_input', 'trigger[0]: bad'),
  automation_not_found: () => new AutomationError('not_found', 'automation not found'),
  something_new: () => new SomethingNewError('a detail no client may see'),
};

const throwRoute = defineRoute({
  method: 'get',
  path: '/throw/{what}',
  summary: 'throws what the test names',
  tag: 'test',
  auth: 'none',
  params: z.object({ what: z.string() }),
  status: 200,
  response: z.object({}),
  errors: [400, 404, 409, 500],
});

describe('the edge error family, mapped by the one onError', () => {
  let server: TestServer;
  const errors: { msg: string; err: unknown }[] = [];

  beforeAll(async () => {
    server = await serveRoutes(
      {},
      (router) =>
        router.add(throwRoute, ({ params }) => {
          throw THROWN[params.what]();
        }),
      { error: (msg, err) => errors.push({ msg, err }) },
    );
  });
  afterAll(() => server.close());

  it('answers each kind with its status and the spec body, without logging an error', async () => {
    const kinds: Record<EdgeErrorKind, number> = { invalid_input: 400, not_found: 404, conflict: 409 };
    for (const [kind, status] of Object.entries(kinds))
      expect(await server.json('GET', `/throw/${kind}`)).toEqual({ status, body: { message: `kind ${kind}` } });
    expect(errors).toEqual([]);
  });

  it('answers every named error of the family as before (no per-route catch)', async () => {
    const expected: [string, number, string][] = [
      ['conflict_error', 409, 'MQTT user dev1 already exists'],
      ['not_found_error', 404, 'no discovery config on x'],
      ['invalid_input_error', 400, 'MQTT user nobody not found'],
      ['service_error', 400, 'brightness must be at most 255'],
      ['unknown_entity', 404, 'entity light.nope not found'],
      ['service_call', 400, 'service light.fly is not supported'],
      ['automation_invalid', 400, 'trigger[0]: bad'],
      ['automation_not_found', 404, 'automation not found'],
    ];
    for (const [what, status, message] of expected)
      expect(await server.json('GET', `/throw/${what}`)).toEqual({ status, body: { message } });
    expect(errors).toEqual([]);
  });

  it('answers an error outside the family 500 with the spec body and logs it, never silently', async () => {
    expect(await server.json('GET', '/throw/something_new')).toEqual({
      status: 500,
      body: { error: 'internal_error' },
    });
    expect(errors).toHaveLength(1);
    expect(errors[0].msg).toBe('GET /throw/something_new failed');
    expect(errors[0].err).toBeInstanceOf(SomethingNewError);
  });
});
