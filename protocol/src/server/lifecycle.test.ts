import { describe, expect, it } from 'vitest';
import { Lifecycle } from './lifecycle.ts';

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('Lifecycle', () => {
  it('undoes the registered steps last first, each once', async () => {
    const life = new Lifecycle();
    const log: string[] = [];
    await life.start(async () => {
      for (const name of ['database', 'broker', 'http']) {
        log.push(`start ${name}`);
        life.defer(name, () => log.push(`stop ${name}`));
      }
    });
    await life.stop();
    await life.stop();
    expect(log).toEqual(['start database', 'start broker', 'start http', 'stop http', 'stop broker', 'stop database']);
  });

  it('gives a second stop() the stop under way: it cannot cut it short', async () => {
    const life = new Lifecycle();
    let release!: () => void;
    const log: string[] = [];
    life.defer('database', () => log.push('database closed'));
    life.defer('flush', () => new Promise<void>((resolve) => (release = resolve)).then(() => log.push('flushed')));
    const first = life.stop();
    const second = life.stop();
    expect(second).toBe(first);
    await tick();
    expect(log).toEqual([]);
    release();
    await second;
    expect(log).toEqual(['flushed', 'database closed']);
  });

  it('starts background undos in turn and waits for them at the join', async () => {
    const life = new Lifecycle();
    const log: string[] = [];
    const releases: Record<string, () => void> = {};
    const slow = (name: string) => () => {
      log.push(`closing ${name}`);
      return new Promise<void>((resolve) => (releases[name] = resolve)).then(() => log.push(`${name} closed`));
    };
    life.defer('database', () => log.push('database closed'));
    life.join('peers gone');
    life.defer('broker', () => log.push('broker closed'));
    life.deferInBackground('http', slow('http'));
    life.deferInBackground('tunnel', slow('tunnel'));
    const stopped = life.stop();
    await tick();
    expect(log).toEqual(['closing tunnel', 'closing http', 'broker closed']);
    releases.http();
    await tick();
    expect(log).not.toContain('database closed');
    releases.tunnel();
    await stopped;
    expect(log.slice(-3)).toEqual(['http closed', 'tunnel closed', 'database closed']);
  });

  it('runs every undo when some fail, then rejects with the first failure and reports the others', async () => {
    const reported: string[] = [];
    const life = new Lifecycle({ onError: (what, err) => reported.push(`${what}: ${(err as Error).message}`) });
    const log: string[] = [];
    life.defer('database', () => log.push('database closed'));
    life.defer('redis', () => Promise.reject(new Error('redis gone')));
    life.defer('http', () => {
      throw new Error('http stuck');
    });
    await expect(life.stop()).rejects.toThrow('http stuck');
    expect(log).toEqual(['database closed']);
    expect(reported).toEqual(['stop: redis failed: redis gone']);
  });

  it('undoes what a failed start registered and rejects with the start error', async () => {
    const life = new Lifecycle();
    const log: string[] = [];
    const started = life.start(async () => {
      life.defer('database', () => log.push('database closed'));
      life.defer('redis', () => log.push('redis closed'));
      throw new Error('listen EADDRINUSE');
    });
    await expect(started).rejects.toThrow('listen EADDRINUSE');
    expect(log).toEqual(['redis closed', 'database closed']);
    await life.stop();
    expect(log).toHaveLength(2);
  });

  it('can start again after a stop', async () => {
    const life = new Lifecycle();
    let opened = 0;
    for (let i = 0; i < 2; i++) {
      await life.start(async () => {
        opened++;
        life.defer('database', () => opened--);
      });
      await life.stop();
    }
    expect(opened).toBe(0);
  });
});
