// API key records, cached per warm function (see RecordCache).
import { RecordCache } from '../platform/record-cache.js';
import type { ApiKey } from './types.js';

export class KeyCache extends RecordCache<ApiKey> {}
