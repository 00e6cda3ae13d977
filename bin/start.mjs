// `npm start`'s entry: bundles bin/start.ts (bin/local/bundle.mjs: our code in one ES module) and runs it in
// this process. `node --import tsx bin/start.ts` runs the same gateway from the TypeScript sources directly.
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleLocal } from './local/bundle.mjs';

let bundle;
try {
  bundle = bundleLocal(fileURLToPath(new URL('./start.ts', import.meta.url)));
} catch (err) {
  // esbuild has printed what it could not build, with file and line; its own stack adds nothing.
  console.error(`Gateway failed to start: bundling bin/start.ts failed${err?.errors?.length ? '' : `: ${err instanceof Error ? err.message : String(err)}`}`);
  process.exit(1);
}
await import(pathToFileURL(bundle).href);
