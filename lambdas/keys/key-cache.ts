// API key records, cached per warm function (see RecordCache).
import { RecordCache } from '../shared/record-cache.js';
import type { ApiKey } from './types.js';

export class KeyCache extends RecordCache<ApiKey> {}
