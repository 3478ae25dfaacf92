import { readFileSync } from 'node:fs';
import path from 'node:path';
import type * as esbuild from 'esbuild';

/** The esbuild plugins of the edge bundle (build.ts step 1). */

const ROOT = path.resolve(import.meta.dirname, '../../..');
const SQLITE_BINDING_MODULE = path.join(ROOT, 'edge/src/native/sqlite-binding.ts');

/**
 * esbuild plugin: when better-sqlite3 is asked for its addon without a `nativeBinding`
 * option, it asks sqliteNativeBinding() first (the executable's asset), so every
 * `new Database(file)` works inside the executable even where the option is not passed.
 * Outside an executable sqliteNativeBinding() answers undefined and nothing changes.
 */
export const sqliteAddonPlugin: esbuild.Plugin = {
  name: 'better-sqlite3-sea-addon',
  setup(build) {
    build.onLoad({ filter: /[\\/]better-sqlite3[\\/]lib[\\/]binding\.js$/ }, (args) => {
      const original = readFileSync(args.path, 'utf8');
      if (!original.includes('exports.getBinding = getBinding')) {
        throw new Error(
          `better-sqlite3 changed its binding loader (${args.path}); update tools/src/build-edge/build.ts`,
        );
      }
      const hook = `
;{
  const __seaAddon = require(${JSON.stringify(SQLITE_BINDING_MODULE)}).sqliteNativeBinding;
  const __getBinding = exports.getBinding;
  exports.getBinding = (nativeBinding) => __getBinding(nativeBinding ?? __seaAddon());
}
`;
      return { contents: original + hook, loader: 'js', resolveDir: path.dirname(args.path) };
    });
  },
};

/**
 * zod's `locales` namespace (50 translations of its error messages, ~300 kB of the script) with only
 * `en`, the one zod configures itself with: the edge never calls `z.config(z.locales.<other>())`,
 * and through `z` the namespace is reachable, so tree shaking cannot drop the others.
 */
export const zodEnglishOnlyPlugin: esbuild.Plugin = {
  name: 'zod-english-only',
  setup(build) {
    build.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, (args) => {
      if (!readFileSync(args.path, 'utf8').includes('export { default as en } from "./en.js";')) {
        throw new Error(`zod changed its locales index (${args.path}); update tools/src/build-edge/build.ts`);
      }
      return {
        contents: 'export { default as en } from "./en.js";\n',
        loader: 'js',
        resolveDir: path.dirname(args.path),
      };
    });
  },
};
