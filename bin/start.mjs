// `npm start`'s entry: bundles bin/start.ts (bin/local/bundle.mjs: our code in one ES module, as the Lambda
// functions run it) and runs it in this process. `node --import tsx bin/start.ts` runs the same gateway
// from the TypeScript sources directly.
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleLocal } from './local/bundle.mjs';

await import(pathToFileURL(bundleLocal(fileURLToPath(new URL('./start.ts', import.meta.url)))).href);
