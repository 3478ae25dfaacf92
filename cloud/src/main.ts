import { parseCloudArgs } from './config.ts';
import { createCloud } from './cloud.ts';

async function main(): Promise<void> {
  let config;
  try {
    config = parseCloudArgs(process.argv.slice(2), process.env);
  } catch (err) {
    process.stderr.write(`error: ${(err as Error).message}\n`);
    process.exit(2);
  }
  const cloud = createCloud(config);
  try {
    await cloud.start();
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const msg = e.code === 'EADDRINUSE' ? `port ${config.port} is already in use (try --port 0)` : e.message;
    process.stderr.write(`error: ${msg}\n`);
    await cloud.stop().catch(() => {});
    process.exit(1);
  }
  process.stdout.write(`ready ${JSON.stringify({ http: cloud.port })}\n`);

  // Every write is committed before its answer, so nothing waits in memory: the first signal
  // stops taking requests and lets those in flight finish; later ones are logged and ignored.
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) {
      cloud.log.warn(
        `${signal} while stopping: ignored (requests in flight finish first; the cloud exits within 15 s)`,
      );
      return;
    }
    stopping = true;
    cloud.log.info('shutting down', { signal });
    const force = setTimeout(() => {
      cloud.log.error(
        'stop did not finish within 15 s: exiting (requests still in flight are cut; their transactions roll back)',
      );
      process.exit(1);
    }, 15_000);
    force.unref();
    try {
      await cloud.stop();
    } catch (err) {
      cloud.log.error('stop failed', err);
      process.exit(1);
    }
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

void main();
