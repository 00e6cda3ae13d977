// Server-sent events from a fetch body, parsed incrementally per the WHATWG rules (data lines joined,
// comments skipped, CR/LF/CRLF line ends). Used by every adapter whose provider streams SSE.
export interface SseEvent {
  event: string | undefined;
  data: string;
  id: string | undefined;
}

export async function* parseSse(body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let event: string | undefined;
  let id: string | undefined;
  let data: string[] = [];

  function* flushLines(final: boolean): Generator<SseEvent> {
    for (;;) {
      const match = /\r\n|\r|\n/.exec(buffer);
      if (!match) break;
      // A lone CR at the end of the buffer may be the first half of CRLF: wait for more input.
      if (match[0] === '\r' && match.index === buffer.length - 1 && !final) break;
      const line = buffer.slice(0, match.index);
      buffer = buffer.slice(match.index + match[0].length);
      if (line === '') {
        if (data.length > 0) yield { event, data: data.join('\n'), id };
        event = undefined;
        data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'data') data.push(value);
      else if (field === 'event') event = value;
      else if (field === 'id') id = value;
    }
  }

  for await (const chunk of body as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    yield* flushLines(false);
  }
  buffer += decoder.decode();
  yield* flushLines(true);
  if (buffer.length > 0) {
    buffer += '\n';
    yield* flushLines(true);
  }
  if (data.length > 0) yield { event, data: data.join('\n'), id };
}
