// Import cycles fail `pnpm lint` and `pnpm test`, type-only imports included: a cycle closed by
// `import type` still means two modules that each need the other (registries belong at a
// composition root, shared types and helpers in a module of their own).
module.exports = {
  forbidden: [{ name: 'no-circular', severity: 'error', from: {}, to: { circular: true } }],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist)/' },
  },
};
