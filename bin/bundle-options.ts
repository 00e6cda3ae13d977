// The esbuild options of the Lambda bundles, shared by CDK (lib/gateway-function.ts), `npm run build`
// and `npm run bench`, so what is measured locally is exactly what `cdk deploy` ships.
// No aws-cdk-lib import here: the build and the bench must not load CDK.
import type { BuildOptions } from 'esbuild';

/**
 * ESM output needs a real `require` for CommonJS dependencies that esbuild keeps as `require(...)`
 * calls (Node built-ins reached from CJS code); the banner defines one at the top of the bundle.
 */
export const ESM_REQUIRE_BANNER =
  "import { createRequire as __gatewayCreateRequire } from 'node:module'; const require = __gatewayCreateRequire(import.meta.url);";

/** The Lambda bundling settings, in the vocabulary of CDK's NodejsFunction `bundling` property. */
export const LAMBDA_BUNDLING = {
  format: 'esm',
  target: 'node22',
  minify: true,
  sourceMap: true,
  // Stack traces map back to file and line; the sources themselves need not ship in the bundle.
  sourcesContent: false,
  mainFields: ['module', 'main'],
  banner: ESM_REQUIRE_BANNER,
  // Bundle the AWS SDK at the versions package-lock.json pins instead of the runtime's copy.
  bundleAwsSDK: true,
  externalModules: [] as string[],
} as const;

/** File name NodejsFunction gives an ESM bundle. */
export const BUNDLE_FILE = LAMBDA_BUNDLING.format === 'esm' ? 'index.mjs' : 'index.js';

/**
 * The esbuild API options equivalent to the command line CDK's NodejsFunction runs for LAMBDA_BUNDLING
 * (`esbuild --bundle <entry> --target=node22 --platform=node --format=esm --outfile=… --minify --sourcemap
 * --sources-content=false --banner:js=… --main-fields=module,main`).
 */
export function lambdaEsbuildOptions(entry: string, outfile: string): BuildOptions {
  return {
    entryPoints: [entry],
    bundle: true,
    target: LAMBDA_BUNDLING.target,
    platform: 'node',
    format: LAMBDA_BUNDLING.format,
    outfile,
    minify: LAMBDA_BUNDLING.minify,
    sourcemap: LAMBDA_BUNDLING.sourceMap,
    sourcesContent: LAMBDA_BUNDLING.sourcesContent,
    external: [...LAMBDA_BUNDLING.externalModules],
    banner: { js: LAMBDA_BUNDLING.banner },
    mainFields: [...LAMBDA_BUNDLING.mainFields],
    logLevel: 'warning',
  };
}
