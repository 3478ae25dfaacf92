import { afterAll, beforeAll } from 'vitest';
import type { MirrorStore } from '../mirror/store.ts';
import { sampleSnapshot, twoEdges } from './fixtures.ts';
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
 * file keeps its own variables and its tests read as before. `devices`: each edge starts with a
 * sample snapshot of that many devices (edge A's, edge B's; stored at seq 1).
 */
export function useMirrorCloud(ready: (cloud: MirrorCloud) => void, devices?: [a: number, b: number]): void {
  let t: TestCloud | undefined;
  beforeAll(async () => {
    t = await startTestCloud();
    const cloud: MirrorCloud = { t, mirror: t.cloud.services.mirror, ...(await twoEdges(t)) };
    if (devices) {
      await cloud.mirror.replaceSnapshot(cloud.edgeA, sampleSnapshot({ devices: devices[0] }), 1);
      await cloud.mirror.replaceSnapshot(cloud.edgeB, sampleSnapshot({ devices: devices[1] }), 1);
    }
    ready(cloud);
  });
  afterAll(async () => {
    await t?.stop();
  });
}
