// Images and files sent by URL, checked where the request is read: an http(s) URL or a data URL of an image
// for an image (Chat Completions, Responses), an http(s) URL for what Anthropic's Messages source fetches.
import { describe, expect, it } from '@jest/globals';
import { chatRequestSchema } from '../../lambdas/inference/formats/chat-schema.js';
import { responsesRequestSchema } from '../../lambdas/inference/formats/responses-schema.js';
import { messagesRequestSchema } from '../../lambdas/inference/formats/messages-schema.js';
import { describeIssues } from '../../lambdas/platform/http/validation.js';
import type * as z from 'zod';

const issues = (schema: z.ZodType, body: unknown) => {
  const error = schema.safeParse(body).error;
  return error ? describeIssues(error.issues, 'body').issues.map((found) => `${found.path}: ${found.message}`) : [];
};
const chat = (url: unknown) => issues(chatRequestSchema, { model: 'a/b', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: url }] }] });
const responses = (url: string) => issues(responsesRequestSchema, { model: 'a/b', input: [{ role: 'user', content: [{ type: 'input_image', image_url: url }] }] });
const messages = (url: string) => issues(messagesRequestSchema, { model: 'a/b', max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url } }] }] });

// s3:// for Bedrock; a data URL of another type for the providers that take one (Gemini: PDFs, audio).
const GOOD = ['https://example.com/cat.png', 'HTTP://example.com/a?b=c', 's3://bucket/cat.png', 'data:image/png;base64,iVBORw0KGgo=', 'data:image/svg+xml,%3Csvg%2F%3E', 'data:application/pdf;base64,JVBERi0='];
const BAD = ['not a url', 'file:///etc/passwd', 'ftp://example.com/a.png', 'data:image/png;base64', 'data:,abc', 'https://exa mple.com/a.png'];

describe('image URLs', () => {
  it.each(GOOD)('takes %s', (url) => {
    expect(chat(url)).toEqual([]);
    expect(chat({ url, detail: 'low' })).toEqual([]);
    expect(responses(url)).toEqual([]);
  });

  it.each(BAD)('refuses %s with a 400 naming the field', (url) => {
    const message = 'an image is an http(s) URL or a data URL (data:image/<type>;base64,<data>)';
    expect(chat(url)).toEqual([`body.messages.0.content.0.image_url: ${message}`]);
    expect(chat({ url })).toEqual([`body.messages.0.content.0.image_url.url: ${message}`]);
    expect(responses(url)).toEqual([`body.input.0.content.0.image_url: ${message}`]);
  });

  it('Messages: a url source is an http(s) URL', () => {
    expect(messages('https://example.com/cat.png')).toEqual([]);
    expect(messages('file:///etc/passwd')).toEqual(['body.messages.0.content.0.source.url: an http(s) URL']);
  });
});
