/** Where the bundle of `entry` goes. */
export function localBundlePath(entry: string): string;
/** Bundles `entry` (a TypeScript file) beside bin/local/bundle.mjs and returns the bundle's path. */
export function bundleLocal(entry: string): string;
