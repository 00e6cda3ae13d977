import { describe, expect, it } from '@jest/globals';
import { dataUrlBytes, dataUrlText, parseDataUrl } from '../../lambdas/providers/data-url.js';

describe('data URLs', () => {
  it('reads base64 payloads and their media type (lower-cased)', () => {
    const parsed = parseDataUrl('data:Image/PNG;BASE64,iVBO Rw0K\nGgo=')!;
    expect(parsed).toEqual({ mimeType: 'image/png', base64: 'iVBORw0KGgo=' });
    expect([...dataUrlBytes(parsed).subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
  });

  it('reads percent-encoded text, defaulting to text/plain', () => {
    const parsed = parseDataUrl('data:,Hello%2C%20w%C3%B6rld')!;
    expect(parsed.mimeType).toBe('text/plain');
    expect(dataUrlText(parsed)).toBe('Hello, wörld');
    expect(dataUrlText(parseDataUrl('data:text/csv;charset=utf-8,a%2Cb')!)).toBe('a,b');
  });

  it('is undefined for anything that is not a data URL', () => {
    expect(parseDataUrl('https://example.com/cat.png')).toBeUndefined();
    expect(parseDataUrl('data:image/png;base64')).toBeUndefined();
  });
});
