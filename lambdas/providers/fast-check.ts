// A quicker way through the zod schemas of upstream replies (parseUpstream, http.ts). zod's parse builds a
// new object for every object it checks; a streamed reply runs one chunk after another through it, and
// that was about 50 KB of garbage and most of the parsing CPU per streamed request. A schema made only of
// the plain parts (objects that ignore or allow unknown keys, strings, finite numbers and safe integers,
// booleans, literals, enums, arrays with length bounds, optional, nullable, unions, unknown) compiles here
// into a function that only checks the value, and a value that passes is used as it is. Anything else
// (refinements, formats, defaults, transforms, strict objects, records …) does not compile: zod parses
// those, and every value that fails the quick check, so errors still read as zod words them.
// A value that passes keeps its unknown keys: the adapters read the fields they know, and copy none.
import type * as z from 'zod';

type Check = (value: unknown) => boolean;

/** The parts of zod's internal definitions read here (zod 4). */
interface Def {
  type: string;
  /** Set on a schema that is itself a check (zod 4's z.int(), z.email() …): zod's. */
  check?: string;
  /** false on z.xor(), a union that fails when more than one option matches: zod's. */
  inclusive?: boolean;
  checks?: Array<{ _zod: { def: { check: string; format?: string; minimum?: number; maximum?: number } } }>;
  shape?: Record<string, Schema>;
  catchall?: Schema;
  element?: Schema;
  innerType?: Schema;
  options?: Schema[];
  values?: unknown[];
  entries?: Record<string, unknown>;
}

interface Schema {
  _zod: { def: Def };
}

const compiled = new WeakMap<Schema, Check | null>();

/** The quick check of a schema, or undefined when it has parts only zod can check. */
export function fastCheckOf(schema: z.ZodType): Check | undefined {
  const key = schema as unknown as Schema;
  let check = compiled.get(key);
  if (check === undefined) {
    check = compile(key, new Set()) ?? null;
    compiled.set(key, check);
  }
  return check ?? undefined;
}

/** `visiting`: the schemas being compiled on the way here; a recursive schema (zod 4's getters) is zod's. */
function compile(schema: Schema, visiting: Set<Schema>): Check | undefined {
  if (visiting.has(schema)) return undefined;
  visiting.add(schema);
  try {
    return compileDef(schema._zod.def, visiting);
  } finally {
    visiting.delete(schema);
  }
}

function compileDef(def: Def, visiting: Set<Schema>): Check | undefined {
  if (def.check !== undefined) return undefined;
  const checks = def.checks ?? [];
  switch (def.type) {
    case 'unknown':
    case 'any':
      return checks.length ? undefined : () => true;
    case 'string':
      return checks.length ? undefined : (value) => typeof value === 'string';
    case 'boolean':
      return checks.length ? undefined : (value) => typeof value === 'boolean';
    case 'null':
      return (value) => value === null;
    case 'number': {
      if (checks.length === 0) return (value) => typeof value === 'number' && Number.isFinite(value);
      if (checks.length === 1 && checks[0]!._zod.def.check === 'number_format' && checks[0]!._zod.def.format === 'safeint') return (value) => Number.isSafeInteger(value);
      return undefined;
    }
    case 'literal': {
      const values = def.values ?? [];
      return (value) => values.includes(value);
    }
    case 'enum': {
      const values = Object.values(def.entries ?? {});
      return (value) => values.includes(value);
    }
    case 'optional': {
      const inner = def.innerType && compile(def.innerType, visiting);
      return inner && ((value) => value === undefined || inner(value));
    }
    case 'nullable': {
      const inner = def.innerType && compile(def.innerType, visiting);
      return inner && ((value) => value === null || inner(value));
    }
    case 'array':
      return compileArray(def, visiting);
    case 'union': {
      if (def.inclusive === false) return undefined;
      const options = (def.options ?? []).map((option) => compile(option, visiting));
      if (options.length === 0 || options.some((option) => option === undefined)) return undefined;
      const all = options as Check[];
      return (value) => all.some((option) => option(value));
    }
    case 'object':
      return compileObject(def, visiting);
    default:
      return undefined;
  }
}

function compileArray(def: Def, visiting: Set<Schema>): Check | undefined {
  const element = def.element && compile(def.element, visiting);
  if (!element) return undefined;
  let min = 0;
  let max = Number.POSITIVE_INFINITY;
  for (const check of def.checks ?? []) {
    const { check: kind, minimum, maximum } = check._zod.def;
    if (kind === 'min_length' && typeof minimum === 'number') min = Math.max(min, minimum);
    else if (kind === 'max_length' && typeof maximum === 'number') max = Math.min(max, maximum);
    else return undefined;
  }
  return (value) => Array.isArray(value) && value.length >= min && value.length <= max && value.every(element);
}

function compileObject(def: Def, visiting: Set<Schema>): Check | undefined {
  if (def.checks?.length) return undefined;
  // Unknown keys stripped (no catchall) or allowed (catchall unknown); a strict object or a typed catchall is zod's.
  if (def.catchall && def.catchall._zod.def.type !== 'unknown') return undefined;
  const fields: Array<[string, Check]> = [];
  for (const [name, field] of Object.entries(def.shape ?? {})) {
    const check = compile(field, visiting);
    if (!check) return undefined;
    fields.push([name, check]);
  }
  return (value) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
    const record = value as Record<string, unknown>;
    for (const [name, check] of fields) if (!check(record[name])) return false;
    return true;
  };
}
