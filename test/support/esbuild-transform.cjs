// Jest transformer: TypeScript to JavaScript with esbuild, keeping ES modules when Jest runs them natively.
const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');
const { transformSync } = require('esbuild');

const SELF = createHash('sha256').update(readFileSync(__filename)).digest('hex');

module.exports = {
  canInstrument: false,
  getCacheKey(source, filename, options) {
    return createHash('sha256').update(SELF).update(String(options.supportsStaticESM)).update(filename).update(source).digest('hex');
  },
  process(source, filename, options) {
    const result = transformSync(source, {
      loader: 'ts',
      format: options.supportsStaticESM ? 'esm' : 'cjs',
      target: 'node20',
      sourcemap: 'inline',
      sourcefile: filename,
    });
    // Outside the ESM runtime (global setup and teardown are required as CommonJS), relative `./x.js`
    // specifiers must find the `.ts` source through Jest's require hook.
    const code = options.supportsStaticESM
      ? result.code
      : result.code.replace(/require\("(\.{1,2}\/[^"]+)\.js"\)/g, 'require("$1")');
    return { code };
  },
};
