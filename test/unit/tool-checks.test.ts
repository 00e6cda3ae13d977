// Tools no provider can serve as asked, refused by the gateway before anything goes upstream, in the Chat
// Completions and Responses formats (Messages: messages-format.test.ts).
import { describe, expect, it } from '@jest/globals';
import { fromChat } from '../../lambdas/inference/formats/from-chat.js';
import { chatRequestSchema } from '../../lambdas/inference/formats/chat-schema.js';
import { fromResponses } from '../../lambdas/inference/formats/from-responses.js';
import { responsesRequestSchema } from '../../lambdas/inference/formats/responses-schema.js';
import { InvalidInputError } from '../../lambdas/platform/errors.js';

const chatTool = (name: string) => ({ type: 'function', function: { name, parameters: { type: 'object', properties: {} } } });
const responsesTool = (name: string) => ({ type: 'function', name, parameters: { type: 'object', properties: {} } });
const chat = (body: Record<string, unknown>) => fromChat(chatRequestSchema.parse({ model: 'a/b', messages: [{ role: 'user', content: 'hi' }], ...body }));
const responses = (body: Record<string, unknown>) => fromResponses(responsesRequestSchema.parse({ model: 'a/b', input: 'hi', ...body }));

describe('tool checks', () => {
  it('chat: a tool_choice naming a tool the request does not define, "required" without tools, two tools of one name: 400s naming the field', () => {
    expect(() => chat({ tools: [chatTool('f')], tool_choice: { type: 'function', function: { name: 'nope' } } }))
      .toThrow('Invalid body.tool_choice: it names the tool "nope", which body.tools does not define');
    expect(() => chat({ tool_choice: { type: 'function', function: { name: 'f' } } })).toThrow(InvalidInputError);
    expect(() => chat({ tool_choice: 'required' })).toThrow('Invalid body.tool_choice: "required" needs tools, and body.tools defines none');
    expect(() => chat({ tools: [chatTool('f'), chatTool('f')] })).toThrow('Invalid body.tools: more than one tool is named "f"; tool names must be unique');
    // The error repeats at most 64 characters of the name (README, errors).
    expect(() => chat({ tools: [chatTool('f')], tool_choice: { type: 'function', function: { name: 'n'.repeat(5000) } } })).toThrow(/"n{64}…"/);
  });

  it('chat: what is consistent passes as it was', () => {
    expect(chat({ tools: [chatTool('f'), chatTool('g')], tool_choice: { type: 'function', function: { name: 'g' } } }).params).toMatchObject({ tool_choice: { name: 'g' } });
    expect(chat({ tools: [chatTool('f')], tool_choice: 'required' }).params.tool_choice).toBe('required');
    expect(chat({ tool_choice: 'none' }).params.tool_choice).toBe('none');
    expect(chat({ tool_choice: 'auto' }).params.tool_choice).toBe('auto');
  });

  it('responses: the same rules', () => {
    expect(() => responses({ tools: [responsesTool('f')], tool_choice: { type: 'function', name: 'nope' } }))
      .toThrow('Invalid body.tool_choice: it names the tool "nope", which body.tools does not define');
    expect(() => responses({ tool_choice: 'required' })).toThrow('Invalid body.tool_choice: "required" needs tools, and body.tools defines none');
    expect(() => responses({ tools: [responsesTool('f'), responsesTool('f')] })).toThrow('Invalid body.tools: more than one tool is named "f"; tool names must be unique');
    expect(responses({ tools: [responsesTool('f')], tool_choice: { type: 'function', name: 'f' } }).params).toMatchObject({ tool_choice: { name: 'f' } });
  });
});
