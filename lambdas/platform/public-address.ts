// Which addresses a request on a customer's behalf (an observability delivery, a private endpoint) may
// reach when the gateway runs in a cloud account: public ones only. Literal addresses are checked as given;
// host names at connection time, on every address they resolve to (so a name that rebinds is caught too).
import dns from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';

/** Private, loopback, link-local, shared and special addresses (IPv4 and IPv6 literals), and localhost. */
export function isPrivateAddress(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  if (bare === 'localhost' || bare.endsWith('.localhost')) return true;
  const family = isIP(bare);
  if (family === 4) {
    const [a, b] = bare.split('.').map(Number) as [number, number];
    return a === 0 || a === 10 || a === 127 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)
      || (a === 100 && b >= 64 && b <= 127) || (a === 198 && (b === 18 || b === 19)) || a >= 224;
  }
  if (family === 6) {
    // Unspecified, loopback, IPv4-mapped or -compatible (::…), NAT64 (64:ff9b::), unique local (fc00::/7), link-local (fe80::/10).
    return bare.startsWith('::') || bare.startsWith('64:ff9b:') || /^f[cd]/.test(bare) || /^fe[89ab]/.test(bare);
  }
  return false;
}

export class RefusedAddressError extends Error {
  override name = 'RefusedAddressError';
}

/** dns.lookup, refusing private addresses. */
export const publicLookup: LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '', 4);
    const list = addresses as dns.LookupAddress[];
    const refused = list.find((entry) => isPrivateAddress(entry.address));
    if (refused || list.length === 0) return callback(new RefusedAddressError(`${hostname} resolves to ${refused?.address ?? 'nothing'}, a private or loopback address`), '', 4);
    if ((options as dns.LookupOptions).all) return (callback as unknown as (e: null, all: dns.LookupAddress[]) => void)(null, list);
    return callback(null, list[0]!.address, list[0]!.family);
  });
};

