// zod building blocks shared by the providers' reply schemas.
import * as z from 'zod';

/**
 * Accepts any `type` not in `known`, so replies may carry kinds this gateway does not use yet, while a
 * malformed item of a known kind cannot slip through as unknown.
 */
export function otherThan(known: readonly string[]) {
  return z
    .object({ type: z.string().refine((type) => !known.includes(type), { message: 'malformed item of a known type' }) })
    .transform((value) => ({ type: 'other' as const, original_type: value.type }));
}
