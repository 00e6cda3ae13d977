// `npm start`'s entry: bundles bin/start.ts (bin/local/bundle.mjs: our code in one ES module) and runs it in
// this process. `node --import tsx bin/start.ts` runs the same gateway from the TypeScript sources directly,
// and so does this file when bin/local cannot be written (a read-only checkout or image).
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleLocal } from './local/bundle.mjs';

const NOT_WRITABLE = new Set(['EACCES', 'EPERM', 'EROFS']);

let bundle;
try {
  bundle = bundleLocal(fileURLToPath(new URL('./start.ts', import.meta.url)));
} catch (err) {
  if (!NOT_WRITABLE.has(err?.code)) {
    // esbuild has printed what it could not build, with file and line; its own stack adds nothing.
    console.error(`Gateway failed to start: bundling bin/start.ts failed${err?.errors?.length ? '' : `: ${err instanceof Error ? err.message : String(err)}`}`);
    process.exit(1);
  }
  console.error(`bin/local cannot be written (${err.code}): running the TypeScript sources through tsx instead of a bundle`);
}
if (bundle) {
  await import(pathToFileURL(bundle).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./start.ts');
}
