import { describe, expect, it } from 'vitest';
import { UsageError, parseCommand } from './cli.ts';

const run = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
  const cmd = parseCommand(argv, env);
  if (cmd.kind !== 'run') throw new Error(`not a run command: ${cmd.kind}`);
  return cmd.config;
};

describe('edge command line', () => {
  it('takes the call_url allow-list from --call-url-allow, else CALL_URL_ALLOW (flags win)', () => {
    expect(run([]).callUrlAllow).toEqual([]);
    expect(run([], { CALL_URL_ALLOW: ' 10.0.0.0/8, nas.lan ,' }).callUrlAllow).toEqual(['10.0.0.0/8', 'nas.lan']);
    expect(run(['--call-url-allow', '192.168.1.20,fd00::/8'], { CALL_URL_ALLOW: '10.0.0.0/8' }).callUrlAllow).toEqual(['192.168.1.20', 'fd00::/8']);
  });

  it('refuses an allow-list entry that is neither an address, a CIDR nor a host name', () => {
    for (const bad of ['10.0.0.0/33', 'not a host', 'http://x/']) {
      expect(() => run(['--call-url-allow', bad])).toThrow(UsageError);
    }
  });
});
