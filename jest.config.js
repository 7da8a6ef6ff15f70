// Jest runs TypeScript through SWC as native ES modules (run with --experimental-vm-modules).
// Three projects: unit (*.spec.ts next to the code), integration (real Postgres/Redis), e2e (HTTP, k8s).
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
      keepClassNames: true,
    },
    module: { type: 'es6' },
    sourceMaps: 'inline',
  },
];
const common = {
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: {
    '^#(core|db|kube|sim|common|testing|scheduling|api-client)$': '<rootDir>/libs/$1/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  testEnvironment: 'node',
};
export default {
  // Generous: integration tests start processes and talk to real services on a 2-core machine.
  // Speed is measured by bench/, never asserted by a test. A global option: Jest ignores it inside a
  // project (it was there until 2026-12-03, so every test without its own timeout had Jest's 5 s).
  testTimeout: 60000,
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/{apps,libs,tools}/**/*.spec.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
    },
    { ...common, displayName: 'e2e', testMatch: ['<rootDir>/test/e2e/**/*.test.ts'] },
    // The real service behind fault-injecting proxies in front of the real Postgres and Redis (test/support/fault-proxy.ts).
    { ...common, displayName: 'chaos', testMatch: ['<rootDir>/test/chaos/**/*.test.ts'] },
    {
      ...common,
      displayName: 'k8s',
      testMatch: ['<rootDir>/test/k8s/**/*.test.ts'],
      // One real etcd + kube-apiserver per run (built from source on first use): see test/k8s/controlplane.
      globalSetup: '<rootDir>/test/k8s/controlplane/global-setup.ts',
      globalTeardown: '<rootDir>/test/k8s/controlplane/global-teardown.ts',
    },
    {
      ...common,
      displayName: 'browser',
      testMatch: ['<rootDir>/test/browser/**/*.test.ts'],
      // Debian's chromium (apt, when missing) and the console built once per run: see test/browser.
      globalSetup: '<rootDir>/test/browser/global-setup.ts',
      globalTeardown: '<rootDir>/test/browser/global-teardown.ts',
    },
  ],
};
