// npm start's bundle (bin/local/bundle.mjs): the gateway process runs from one esbuild bundle of its entry,
// not through tsx. What it must keep: paths bin/local's modules resolve relative to themselves, stack
// traces that name the TypeScript sources, and never a half-written bundle for a process starting
// beside a build.
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from '@jest/globals';
import { bundleLocal, localBundlePath } from '../../bin/local/bundle.mjs';

const run = promisify(execFile);
const ROOT = process.cwd();
const ENTRY = join(ROOT, 'test', 'fixtures', 'local-bundle', 'bundle-fixture.ts');

afterAll(() => {
  rmSync(localBundlePath(ENTRY), { force: true });
  rmSync(`${localBundlePath(ENTRY)}.map`, { force: true });
});

describe('the local bundle', () => {
  it('goes beside bin/local/bundle.mjs, with its source map, and keeps bin/local-relative paths pointing into bin/local', async () => {
    const file = bundleLocal(ENTRY);
    expect(file).toBe(join(ROOT, 'bin', 'local', '.bundle-fixture.mjs'));
    expect(existsSync(`${file}.map`)).toBe(true);
    expect(readFileSync(file, 'utf8')).toContain('//# sourceMappingURL=.bundle-fixture.mjs.map');
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', `const m = await import(${JSON.stringify(pathToFileURL(file).href)}); console.log(m.childEntry);`]);
    expect(stdout.trim()).toBe(join(ROOT, 'bin', 'local', 'aggregator-worker.ts'));
    expect(existsSync(stdout.trim())).toBe(true);
  });

  it('gives stack traces in the TypeScript source under --enable-source-maps, as npm start runs it', async () => {
    const file = bundleLocal(ENTRY);
    const script = `const m = await import(${JSON.stringify(pathToFileURL(file).href)}); try { m.fail(); } catch (err) { console.log(err.stack); }`;
    const { stdout } = await run(process.execPath, ['--enable-source-maps', '--input-type=module', '-e', script]);
    expect(stdout).toContain('thrown from the bundled fixture');
    expect(stdout).toMatch(/test\/fixtures\/local-bundle\/bundle-fixture\.ts:8:9/);
  });

  it('leaves no esbuild process behind in the process that built it (the gateway lives on after its build)', async () => {
    const script = `import { execFileSync } from 'node:child_process';
      import { bundleLocal } from ${JSON.stringify(pathToFileURL(join(ROOT, 'bin', 'local', 'bundle.mjs')).href)};
      bundleLocal(${JSON.stringify(ENTRY)});
      await new Promise((resolve) => setTimeout(resolve, 300));
      const children = execFileSync('ps', ['-o', 'args=', '--ppid', String(process.pid)], { encoding: 'utf8' }).split('\\n').filter((line) => line.includes('esbuild'));
      console.log(JSON.stringify({ children, env: process.env.ESBUILD_WORKER_THREADS ?? null }));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, ESBUILD_WORKER_THREADS: undefined } });
    expect(JSON.parse(stdout.trim())).toEqual({ children: [], env: null });
  });

  it('is replaced whole: processes importing it while others rebuild it always load a complete bundle', async () => {
    bundleLocal(ENTRY);
    const file = localBundlePath(ENTRY);
    // Four builders and eight importers at once; every import must find the module's exports.
    const builders = Array.from({ length: 4 }, () => run(process.execPath, ['--input-type=module', '-e',
      `import { bundleLocal } from ${JSON.stringify(pathToFileURL(join(ROOT, 'bin', 'local', 'bundle.mjs')).href)}; for (let i = 0; i < 5; i++) bundleLocal(${JSON.stringify(ENTRY)});`]));
    const importers = Array.from({ length: 8 }, () => run(process.execPath, ['--input-type=module', '-e',
      `for (let i = 0; i < 20; i++) { const m = await import(${JSON.stringify(pathToFileURL(file).href)} + '?' + i); if (typeof m.fail !== 'function') throw new Error('incomplete bundle'); }`]));
    await expect(Promise.all([...builders, ...importers])).resolves.toHaveLength(12);
  });
});

describe('npm start\'s entry (bin/start.mjs)', () => {
  // A copy of the entry and the bundler beside a stand-in bin/start.ts, inside the project (so that esbuild
  // and tsx resolve from its node_modules), in the git-ignored .exp directory.
  const copy = () => {
    mkdirSync(join(ROOT, '.exp'), { recursive: true });
    const dir = mkdtempSync(join(ROOT, '.exp', 'start-entry-'));
    mkdirSync(join(dir, 'bin', 'local'), { recursive: true });
    copyFileSync(join(ROOT, 'bin', 'start.mjs'), join(dir, 'bin', 'start.mjs'));
    copyFileSync(join(ROOT, 'bin', 'local', 'bundle.mjs'), join(dir, 'bin', 'local', 'bundle.mjs'));
    writeFileSync(join(dir, 'bin', 'start.ts'), "const from: string = import.meta.url;\nconsole.log(`started from ${from}`);\n");
    return dir;
  };

  it('runs the bundle it has just built', async () => {
    const dir = copy();
    try {
      const { stdout } = await run(process.execPath, ['--enable-source-maps', join(dir, 'bin', 'start.mjs')]);
      expect(stdout.trim()).toBe(`started from ${pathToFileURL(join(dir, 'bin', 'local', '.start.mjs')).href}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('runs the TypeScript sources through tsx, and says so, when bin/local cannot be written', async () => {
    const dir = copy();
    const local = join(dir, 'bin', 'local');
    // Immutable even for root (the tests may run as root, whom file modes do not stop).
    await run('chattr', ['+i', local]);
    try {
      const { stdout, stderr } = await run(process.execPath, ['--enable-source-maps', join(dir, 'bin', 'start.mjs')]);
      expect(stderr).toMatch(/bin\/local cannot be written \(E(PERM|ACCES|ROFS)\): running the TypeScript sources through tsx/);
      expect(stdout.trim()).toBe(`started from ${pathToFileURL(join(dir, 'bin', 'start.ts')).href}`);
      expect(readdirSync(local)).toEqual(['bundle.mjs']);
    } finally {
      await run('chattr', ['-i', local]);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
