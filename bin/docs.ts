// `npm run docs`: writes docs/API.md (the API reference) from the route table's OpenAPI document.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderApiReference } from './docs/api-reference.js';

export const API_REFERENCE_PATH = resolve(dirname(fileURLToPath(import.meta.url)), '../docs/API.md');

mkdirSync(dirname(API_REFERENCE_PATH), { recursive: true });
writeFileSync(API_REFERENCE_PATH, renderApiReference());
console.log(`wrote ${API_REFERENCE_PATH}`);
