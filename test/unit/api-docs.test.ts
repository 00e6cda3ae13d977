import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { renderApiReference } from '../../bin/docs/api-reference.js';
import { contractGroups } from '../../bin/docs/contract-routes.js';
import { routes } from '../../lambdas/app/routes.js';
import { fullPath } from '../../lambdas/platform/http/router.js';

const committed = readFileSync(new URL('../../docs/API.md', import.meta.url), 'utf8');
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('API reference (docs/API.md)', () => {
  it('is what `npm run docs` renders from the current route table (run it after changing routes)', () => {
    expect(committed).toBe(renderApiReference());
  });

  it('documents every route of the table with its reply', () => {
    for (const route of routes) {
      expect(committed).toContain(`### \`${route.method} ${fullPath(route)}\``);
    }
  });

  it('marks a contract group as served only when every one of its routes is in the route table', () => {
    const table = committed.slice(committed.indexOf('## Coverage'), committed.indexOf('## Routes'));
    const served = new Set(routes.map((route) => `${route.method} ${route.path.replace(/\{[^}]+\}/g, '{}')}`));
    for (const { group, routes: list } of contractGroups) {
      const row = table.split('\n').find((line) => line.startsWith(`| ${group} |`));
      const missing = list.filter(([method, path]) => !served.has(`${method} ${path.replace(/\{[^}]+\}/g, '{}')}`));
      expect(row).toBeDefined();
      if (missing.length === 0) expect(row).toMatch(/^\| [^|]+ \| yes \|/);
      else for (const [method, path] of missing) expect(row).toContain(`\`${method} ${path}\``);
    }
  });

  it('is linked from the README, which links nothing outside the repository', () => {
    expect(readme).toContain('](docs/API.md)');
    expect(readme).not.toMatch(/\]\(\.\.\//);
  });
});
