// Server-sent events from a fetch body, parsed incrementally per the WHATWG rules (data lines joined,
// comments skipped, CR/LF/CRLF line ends). Used by every adapter whose provider streams SSE.
export interface SseEvent {
  event: string | undefined;
  data: string;
  id: string | undefined;
}

const LF = 10;
const COLON = 58;
const SPACE = 32;

/**
 * The parser's state between chunks. Each chunk's text is scanned once, by position (indexOf for the line
 * ends, no regular expression, no copy of the rest of the buffer per line), and its events come back
 * together: the generator below then costs one yield per event rather than a nested generator per chunk.
 */
class SseParser {
  private readonly decoder = new TextDecoder();
  private buffer = '';
  private event: string | undefined;
  private id: string | undefined;
  private data: string[] = [];

  push(chunk: Uint8Array): SseEvent[] {
    return this.lines(this.decoder.decode(chunk, { stream: true }), false);
  }

  /** The body's end: the rest of the text, a last line without its end, a last event without its blank line. */
  end(): SseEvent[] {
    const events = this.lines(this.decoder.decode(), true);
    if (this.buffer.length > 0) events.push(...this.lines('\n', true));
    if (this.data.length > 0) events.push(this.dispatch());
    return events;
  }

  private lines(text: string, final: boolean): SseEvent[] {
    const buffer = this.buffer.length > 0 ? this.buffer + text : text;
    const events: SseEvent[] = [];
    const length = buffer.length;
    let position = 0;
    // Most streams have no CR at all: one search tells, and it is repeated only past each CR found.
    let cr = buffer.indexOf('\r');
    for (;;) {
      if (cr !== -1 && cr < position) cr = buffer.indexOf('\r', position);
      const lf = buffer.indexOf('\n', position);
      let end: number;
      let next: number;
      if (cr !== -1 && (lf === -1 || cr < lf)) {
        // A lone CR at the end of the buffer may be the first half of CRLF: wait for more input.
        if (cr === length - 1 && !final) break;
        end = cr;
        next = buffer.charCodeAt(cr + 1) === LF ? cr + 2 : cr + 1;
      } else if (lf !== -1) {
        end = lf;
        next = lf + 1;
      } else {
        break;
      }
      this.line(buffer, position, end, events);
      position = next;
    }
    this.buffer = position === 0 ? buffer : buffer.slice(position);
    return events;
  }

  private line(buffer: string, start: number, end: number, events: SseEvent[]): void {
    if (start === end) {
      if (this.data.length > 0) events.push(this.dispatch());
      this.event = undefined;
      return;
    }
    if (buffer.charCodeAt(start) === COLON) return;
    let colon = buffer.indexOf(':', start);
    if (colon === -1 || colon > end) colon = end;
    let from = colon === end ? end : colon + 1;
    if (from < end && buffer.charCodeAt(from) === SPACE) from += 1;
    const fieldLength = colon - start;
    // The field's name is compared in place: no string is made for it.
    if (fieldLength === 4 && buffer.startsWith('data', start)) this.data.push(buffer.slice(from, end));
    else if (fieldLength === 5 && buffer.startsWith('event', start)) this.event = buffer.slice(from, end);
    else if (fieldLength === 2 && buffer.startsWith('id', start)) this.id = buffer.slice(from, end);
  }

  private dispatch(): SseEvent {
    const data = this.data.length === 1 ? this.data[0]! : this.data.join('\n');
    const event: SseEvent = { event: this.event, data, id: this.id };
    this.data = [];
    return event;
  }
}

export async function* parseSse(body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const parser = new SseParser();
  for await (const chunk of body as AsyncIterable<Uint8Array>) {
    const events = parser.push(chunk);
    for (let i = 0; i < events.length; i += 1) yield events[i]!;
  }
  const rest = parser.end();
  for (let i = 0; i < rest.length; i += 1) yield rest[i]!;
}
