import { afterAll, beforeAll } from 'vitest';
import type { Edge, EdgeConfig } from '../edge.ts';
import { startEdge, tempDir } from './edge.ts';

/**
 * A whole edge for a test file: started in a fresh temp dir before the file's tests and handed
 * to `setUp` (which keeps it and does the file's own setup), stopped and its dir removed after
 * them. Register hooks that close what `setUp` opened after this call: vitest runs afterAll
 * hooks in reverse order, so they run before the edge stops. In its own module because it
 * registers vitest hooks; edge.ts is also used outside test files.
 */
export function useEdge(
  config: Partial<EdgeConfig>,
  setUp: (edge: Edge, dir: string) => void | Promise<void>,
): { restart: () => Promise<Edge> } {
  let tmp: ReturnType<typeof tempDir> | undefined;
  let edge: Edge | undefined;
  beforeAll(async () => {
    tmp = tempDir();
    edge = await startEdge(tmp.dir, config);
    await setUp(edge, tmp.dir);
  });
  afterAll(async () => {
    await edge?.stop();
    tmp?.cleanup();
  });
  return {
    /** Stops the edge and starts another on the same data dir (not handed to `setUp`). */
    async restart() {
      await edge?.stop();
      edge = await startEdge(tmp!.dir, config);
      return edge;
    },
  };
}
