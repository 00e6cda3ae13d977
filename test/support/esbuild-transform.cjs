// Jest transformer: TypeScript to JavaScript with esbuild, keeping ES modules when Jest runs them natively.
const { transformSync } = require('esbuild');

module.exports = {
  canInstrument: false,
  process(source, filename, options) {
    const result = transformSync(source, {
      loader: 'ts',
      format: options.supportsStaticESM ? 'esm' : 'cjs',
      target: 'node20',
      sourcemap: 'inline',
      sourcefile: filename,
    });
    return { code: result.code };
  },
};
