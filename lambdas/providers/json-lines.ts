// A response body of JSON Lines read as it arrives, one line at a time: a provider batch's results file (up
// to hundreds of MB, Bedrock's output repeating every request) is never held whole as text.

/** The body's non-blank lines, decoded as UTF-8 across chunk boundaries. */
export async function* bodyLines(body: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array> | null | undefined): AsyncGenerator<string> {
  if (!body) return;
  const decoder = new TextDecoder();
  let tail = '';
  for await (const chunk of body as AsyncIterable<Uint8Array>) {
    const text = tail + decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
      const line = text.slice(start, end);
      start = end + 1;
      if (line.trim() !== '') yield line;
    }
    tail = text.slice(start);
  }
  tail += decoder.decode();
  if (tail.trim() !== '') yield tail;
}
