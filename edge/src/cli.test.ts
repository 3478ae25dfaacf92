import { describe, expect, it } from 'vitest';
import { parseCommand, USAGE, UsageError } from './cli.ts';

const run = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
  const command = parseCommand(argv, env);
  if (command.kind !== 'run') throw new Error(`expected run, got ${command.kind}`);
  return command.config;
};

describe('edge CLI: write-behind windows', () => {
  it('defaults to 250 ms for states and 1000 ms for retained messages', () => {
    expect(run([])).toMatchObject({ stateFlushMs: 250, retainedFlushMs: 1000 });
  });

  it('takes --state-flush-ms / --retained-flush-ms, or STATE_FLUSH_MS / RETAINED_FLUSH_MS; flags win', () => {
    expect(run(['--state-flush-ms', '50', '--retained-flush-ms', '0'])).toMatchObject({ stateFlushMs: 50, retainedFlushMs: 0 });
    expect(run([], { STATE_FLUSH_MS: '100', RETAINED_FLUSH_MS: '2000' })).toMatchObject({ stateFlushMs: 100, retainedFlushMs: 2000 });
    expect(run(['--state-flush-ms', '20'], { STATE_FLUSH_MS: '100' })).toMatchObject({ stateFlushMs: 20 });
  });

  it('refuses values that are not whole milliseconds within 0-60000', () => {
    for (const bad of ['-1', '60001', '1e9', 'soon', '12.5', '']) {
      expect(() => run(['--state-flush-ms', bad]), bad).toThrow(UsageError);
    }
    expect(() => run([], { RETAINED_FLUSH_MS: '3600000' })).toThrow(/--retained-flush-ms must be .* 0-60000/);
  });

  it('lists both flags in the usage text', () => {
    expect(USAGE).toMatch(/--state-flush-ms/);
    expect(USAGE).toMatch(/--retained-flush-ms/);
  });
});
