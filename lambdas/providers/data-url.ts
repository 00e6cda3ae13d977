// data: URLs (images, audio and files sent inline) → media type and base64 payload, for adapters whose
// providers take bytes rather than URLs.
export interface DataUrl {
  /** Lower-cased; text/plain when the URL names none. */
  mimeType: string;
  /** The payload as base64, whether the URL carried base64 or percent-encoded text. */
  base64: string;
}

const DATA_URL = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s;

export function parseDataUrl(url: string): DataUrl | undefined {
  const match = DATA_URL.exec(url);
  if (!match) return undefined;
  const isBase64 = match[2]!.toLowerCase().split(';').includes('base64');
  const payload = match[3]!;
  return {
    mimeType: (match[1] || 'text/plain').toLowerCase(),
    base64: isBase64 ? payload.replace(/\s/g, '') : Buffer.from(decodeURIComponent(payload), 'utf8').toString('base64'),
  };
}

export const dataUrlBytes = (dataUrl: DataUrl): Buffer => Buffer.from(dataUrl.base64, 'base64');
export const dataUrlText = (dataUrl: DataUrl): string => dataUrlBytes(dataUrl).toString('utf8');
