import { defineConfig } from 'vite';

// One build for the cloud and every edge: hashed files under assets/, no inline script
// (the servers' Content-Security-Policy allows 'self' only), nothing fetched from a CDN.
export default defineConfig({
  root: import.meta.dirname,
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
    rollupOptions: {
      // zod's sources carry /*@__PURE__*/ comments where Rollup cannot use them: harmless, and noise in every build
      onwarn(warning, warn) {
        if (warning.code !== 'INVALID_ANNOTATION') warn(warning);
      },
    },
  },
});
