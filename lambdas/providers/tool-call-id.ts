// An id for a tool call whose provider gave none (Gemini usually; an OpenAI-compatible server now and then).
// Unique, as OpenAI's are (`call_` and 24 letters and digits): clients key calls and their results by id
// across a conversation, and a history sent to another provider later (Anthropic, OpenAI) must not repeat one.
import { randomUUID } from 'node:crypto';

export function newToolCallId(): string {
  return `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`;
}
