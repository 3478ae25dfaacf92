import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

/**
 * Swagger UI's prebuilt files (npm `swagger-ui-dist`), served by the cloud itself: no CDN, the
 * reference works offline. Resolved from the module's own location, so the sources find
 * cloud/node_modules and so does the bundle (`pnpm build:cloud` writes it into cloud/dist, where
 * better-sqlite3 resolves the same way).
 */
const FILES: Record<string, string> = {
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

export interface SwaggerAsset {
  type: string;
  body: Buffer;
  /** gzip -9 of body for text files (1.7 MB of JavaScript is ~0.4 MB gzipped), null otherwise */
  gzip: Buffer | null;
}

export interface SwaggerUi {
  version: string;
  /** null for a name that is not one of the served files */
  asset(name: string): SwaggerAsset | null;
}

export function loadSwaggerUi(): SwaggerUi {
  const require = createRequire(import.meta.url);
  const pkgFile = require.resolve('swagger-ui-dist/package.json');
  const dir = path.dirname(pkgFile);
  const version = (JSON.parse(readFileSync(pkgFile, 'utf8')) as { version: string }).version;
  const cache = new Map<string, SwaggerAsset>();
  return {
    version,
    asset(name) {
      const type = FILES[name];
      if (!type) return null;
      let hit = cache.get(name);
      if (!hit) {
        // read on first use: a cloud nobody reads the docs of keeps the 2 MB out of memory
        const body = readFileSync(path.join(dir, name));
        hit = { type, body, gzip: type.startsWith('text/') ? gzipSync(body, { level: 9 }) : null };
        cache.set(name, hit);
      }
      return hit;
    },
  };
}
