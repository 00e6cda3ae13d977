// Host binding of vault secrets (PUT /vault/secrets/{name} in docs/API.md "Vault"): every host is lowercased and loses a trailing
// dot; schemes, ports, paths, wildcards and empty values are refused; duplicates after normalization
// collapse. Release matching is exact: never a parent domain, a subdomain or any other hostname.

export const MAX_HOSTS = 100;
export const MAX_HOST_LENGTH = 254;

const LABEL = /^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$/;

export class HostError extends Error {}

/** One host as stored, or a HostError saying which rule it breaks. */
export function normalizeHost(raw: string): string {
  if (raw.trim() === '') throw new HostError('must not be empty');
  if (raw !== raw.trim() || /\s/.test(raw)) throw new HostError('must not contain whitespace');
  if (raw.includes('://') || /^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) throw new HostError('must be a hostname without a scheme (no https://)');
  if (raw.includes('/')) throw new HostError('must be a hostname without a path');
  if (raw.includes('*')) throw new HostError('must be an exact hostname: wildcards are not allowed');
  if (raw.includes(':')) throw new HostError('must be a hostname without a port');
  if (/[?#@\\]/.test(raw)) throw new HostError('must be a bare hostname (no query, fragment or user info)');
  let host = raw.toLowerCase();
  if (host.endsWith('.')) host = host.slice(0, -1);
  if (host === '') throw new HostError('must not be empty');
  if (host.length > MAX_HOST_LENGTH) throw new HostError(`must be at most ${MAX_HOST_LENGTH} characters`);
  if (!host.split('.').every((label) => LABEL.test(label))) throw new HostError('must be a hostname: labels of letters, digits and hyphens separated by dots');
  return host;
}

/** The stored host list: normalized, duplicates collapsed, in first-seen order. Throws naming the entry. */
export function normalizeHosts(hosts: string[]): string[] {
  const seen = new Set<string>();
  hosts.forEach((raw, index) => {
    try {
      seen.add(normalizeHost(raw));
    } catch (err) {
      if (err instanceof HostError) throw new HostError(`Invalid body.hosts[${index}]: ${err.message}`);
      throw err;
    }
  });
  return [...seen];
}

/** The hostname an outbound request goes to, normalized like stored hosts; undefined for a malformed URL. */
export function hostOfUrl(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return undefined;
    const host = parsed.hostname.toLowerCase();
    return host.endsWith('.') ? host.slice(0, -1) : host;
  } catch {
    return undefined;
  }
}
