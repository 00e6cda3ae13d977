// Jest runs the TypeScript sources as native ESM, transpiled by esbuild (no type checking here: `tsc --noEmit` does that).
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/test', '<rootDir>/lambdas'],
  testMatch: ['**/*.test.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': '<rootDir>/test/support/esbuild-transform.cjs' },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  setupFiles: ['<rootDir>/test/support/setup-env.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 30_000,
  maxWorkers: 2,
};
