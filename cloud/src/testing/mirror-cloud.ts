import { afterAll, beforeAll } from 'vitest';
import type { MirrorStore } from '../mirror/store.ts';
import { twoEdges } from './fixtures.ts';
import { startTestCloud, type TestCloud } from './harness.ts';

export interface MirrorCloud {
  t: TestCloud;
  mirror: MirrorStore;
  edgeA: number;
  edgeB: number;
}

/**
 * The setup of the MirrorStore test files: one test cloud for the file (started before its
 * tests, stopped after them) with two edges of one user. `ready` gets it once started, so a
 * file keeps its own variables and its tests read as before.
 */
export function useMirrorCloud(ready: (cloud: MirrorCloud) => void): void {
  let t: TestCloud | undefined;
  beforeAll(async () => {
    t = await startTestCloud();
    ready({ t, mirror: t.cloud.services.mirror, ...(await twoEdges(t)) });
  });
  afterAll(async () => {
    await t?.stop();
  });
}
