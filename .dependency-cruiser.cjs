// The dependency rules of lambdas/ (README, "Architecture"), checked by `npm test` through `npm run deps`.
// Type-only imports count: a type import still couples the two modules.
const FEATURES = ['keys', 'organizations', 'workspaces', 'credits', 'generations', 'analytics', 'vault', 'interns', 'byok', 'catalog'];
const feature = `(${FEATURES.join('|')})`;

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycles: each module can be read and tested from the bottom up.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'features-through-index',
      severity: 'error',
      comment: 'A feature is used from outside only through its index.ts, its public surface.',
      from: { path: '^lambdas/([^/]+)/', pathNot: '\\.test\\.ts$' },
      to: { path: `^lambdas/${feature}/`, pathNot: ['^lambdas/$1/', `^lambdas/${feature}/index\\.ts$`] },
    },
    {
      name: 'http-status-at-the-edge',
      severity: 'error',
      comment: 'Only the HTTP platform, the handlers, the composition root, the routes files and the inference routes\' operation (it writes SSE error frames, which carry a status) know HTTP statuses; the rest throws domain errors (platform/errors.ts).',
      from: { path: '^lambdas/', pathNot: ['^lambdas/(platform/http|handlers|app)/', '/routes\\.ts$', '^lambdas/inference/operations\\.ts$', '\\.test\\.ts$'] },
      to: { path: '^lambdas/platform/http/errors\\.ts$' },
    },
    {
      name: 'platform-depends-on-nothing-above',
      severity: 'error',
      comment: 'platform/ is shared machinery: it imports no feature, billing, inference, provider, app or handler code.',
      from: { path: '^lambdas/platform/' },
      to: { path: '^lambdas/(?!platform/)' },
    },
    {
      name: 'billing-below-features',
      severity: 'error',
      comment: 'billing/ sits under the features and the pipeline: it runs only platform/ code. It may name the types it meters (keys, workspaces) and the internal model (providers/types.ts), type-only.',
      from: { path: '^lambdas/billing/', pathNot: '\\.test\\.ts$' },
      to: { path: '^lambdas/(?!billing/|platform/)', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'lambdas-stay-in-lambdas',
      severity: 'error',
      comment: 'Code that runs in a Lambda never imports the CDK app (lib/) or the local tools (bin/).',
      from: { path: '^lambdas/' },
      to: { path: '^(lib|bin|test|bench)/' },
    },
    {
      name: 'no-cdk-in-lambdas',
      severity: 'error',
      comment: 'Nothing in lambdas/ imports CDK.',
      from: { path: '^lambdas/' },
      to: { path: 'node_modules/(aws-cdk-lib|constructs|aws-cdk)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
