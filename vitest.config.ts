import { defineConfig } from 'vitest/config';

/**
 * Two projects: everything on the embedded engines, and the cloud's suite again on the
 * PostgreSQL at DATABASE_URL (CI sets it; each test cloud gets a schema of its own there).
 * Tests read TEST_DATABASE_URL, never DATABASE_URL, so processes they spawn use only what they pass.
 */
const postgresUrl = process.env.DATABASE_URL || '';
if (!postgresUrl)
  console.warn(
    'DATABASE_URL is not set: the cloud suite runs on SQLite only (set it, e.g. postgres://postgres@127.0.0.1:5432/test, to run it on PostgreSQL too)',
  );

const shared = {
  exclude: ['**/node_modules/**', 'dist/**'],
  testTimeout: 20_000,
  hookTimeout: 20_000,
  pool: 'forks' as const,
  // expect.poll gives up after 1 s by default: too short for a browser or a broker on a loaded CI machine
  expect: { poll: { timeout: 10_000 } },
};

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          ...shared,
          name: 'sqlite',
          include: ['**/src/**/*.test.ts', 'tools/**/*.test.ts'],
          env: { DATABASE_URL: '', TEST_DATABASE_URL: '' },
        },
      },
      ...(postgresUrl
        ? [
            {
              test: {
                ...shared,
                name: 'postgres',
                include: ['cloud/src/**/*.test.ts', 'tools/src/e2e/*.test.ts'],
                env: { DATABASE_URL: '', TEST_DATABASE_URL: postgresUrl },
              },
            },
          ]
        : []),
    ],
  },
});
