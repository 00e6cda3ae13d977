// Responses request → InferenceRequest. The request is stateless: the whole history arrives in `input`.
import type { z } from 'zod';
import type { ContentPart, FunctionTool, Message, ResponseFormat, ToolChoice } from '../../providers/types.js';
import type { InferenceRequest } from '../inference-request.js';
import { checkTools, functionToolsOnly, rejectPlugins, routingFields, toReasoning } from './from-chat.js';
import type { InputItem, ResponsesRequest, inputContentPart } from './responses-schema.js';

type Part = z.infer<typeof inputContentPart> | { type: 'output_text'; text: string } | { type: 'refusal'; refusal: string };

function toPart(part: Part): ContentPart {
  switch (part.type) {
    case 'input_text': return { type: 'text', text: part.text, ...(part.cache_control ? { cache_control: part.cache_control } : {}) };
    case 'output_text': return { type: 'text', text: part.text };
    case 'refusal': return { type: 'text', text: part.refusal };
    case 'input_image': return { type: 'image', url: part.image_url!, ...(part.detail ? { detail: part.detail } : {}) };
    case 'input_file': return { type: 'file', url: (part.file_data ?? part.file_url)!, ...(part.filename ? { filename: part.filename } : {}) };
    case 'input_audio': return { type: 'audio', data: part.input_audio.data, format: part.input_audio.format };
  }
}

function toContent(content: string | Part[] | null): ContentPart[] {
  if (content === null) return [];
  if (typeof content === 'string') return content.length ? [{ type: 'text', text: content }] : [];
  return content.map(toPart);
}

export function responsesInputToMessages(instructions: string | null | undefined, input: string | InputItem[]): Message[] {
  const messages: Message[] = [];
  if (instructions) messages.push({ role: 'system', content: [{ type: 'text', text: instructions }] });
  if (typeof input === 'string') {
    messages.push({ role: 'user', content: [{ type: 'text', text: input }] });
    return messages;
  }
  let pendingReasoning: string | undefined;
  let pendingSignature: string | undefined;
  const openAssistant = (): Extract<Message, { role: 'assistant' }> => {
    const last = messages.at(-1);
    if (last?.role === 'assistant') return last;
    const created: Extract<Message, { role: 'assistant' }> = { role: 'assistant', content: [] };
    if (pendingReasoning) {
      created.reasoning = pendingReasoning;
      pendingReasoning = undefined;
    }
    if (pendingSignature) {
      created.reasoning_signature = pendingSignature;
      pendingSignature = undefined;
    }
    messages.push(created);
    return created;
  };
  for (const item of input) {
    if ('type' in item && item.type === 'function_call') {
      const assistant = openAssistant();
      (assistant.tool_calls ??= []).push({ id: item.call_id, name: item.name, arguments: item.arguments });
      continue;
    }
    if ('type' in item && item.type === 'function_call_output') {
      messages.push({ role: 'tool', tool_call_id: item.call_id, content: toContent(item.output as Part[] | string) });
      continue;
    }
    if ('type' in item && item.type === 'reasoning') {
      const text = [...(item.summary ?? []), ...(item.content ?? [])].map((part) => part.text).join('\n');
      if (text) pendingReasoning = pendingReasoning ? `${pendingReasoning}\n${text}` : text;
      // The provider's signature over the reasoning, as this gateway returns it (encrypted_content).
      const signature = item.signature ?? item.encrypted_content;
      if (signature) pendingSignature = signature;
      continue;
    }
    const message = item as { role: 'user' | 'system' | 'developer' | 'assistant'; content: string | Part[] | null };
    if (message.role === 'assistant') {
      const assistant = openAssistant();
      assistant.content.push(...toContent(message.content));
    } else if (message.role === 'user') {
      messages.push({ role: 'user', content: toContent(message.content) });
    } else {
      messages.push({ role: 'system', content: toContent(message.content) });
    }
  }
  return messages;
}

export function fromResponses(body: ResponsesRequest): InferenceRequest {
  const plugins = body.plugins ?? [];
  rejectPlugins(plugins);
  const tools: FunctionTool[] = functionToolsOnly(body.tools).map((tool) => ({
    name: tool.name,
    ...(tool.description != null ? { description: tool.description } : {}),
    ...(tool.parameters != null ? { parameters: tool.parameters } : {}),
    ...(tool.strict != null ? { strict: tool.strict } : {}),
  }));
  const format = body.text?.format;
  const responseFormat: ResponseFormat | undefined = !format ? undefined
    : format.type === 'json_schema'
      ? { type: 'json_schema', name: format.name, schema: format.schema, ...(format.strict != null ? { strict: format.strict } : {}), ...(format.description ? { description: format.description } : {}) }
      : format.type === 'json_object' ? { type: 'json_object' } : undefined;
  const toolChoice: ToolChoice | undefined = body.tool_choice == null ? undefined
    : typeof body.tool_choice === 'string' ? body.tool_choice : { name: body.tool_choice.name };
  checkTools(tools, toolChoice);
  const reasoning = toReasoning(body.reasoning);
  const params: InferenceRequest['params'] = {
    messages: responsesInputToMessages(body.instructions, body.input as string | InputItem[]),
    ...(tools.length ? { tools } : {}),
    ...(toolChoice !== undefined ? { tool_choice: toolChoice } : {}),
    ...(body.parallel_tool_calls != null ? { parallel_tool_calls: body.parallel_tool_calls } : {}),
    ...(body.max_output_tokens != null ? { max_output_tokens: body.max_output_tokens } : {}),
    ...(body.temperature != null ? { temperature: body.temperature } : {}),
    ...(body.top_p != null ? { top_p: body.top_p } : {}),
    ...(body.top_k !== undefined ? { top_k: body.top_k } : {}),
    ...(body.frequency_penalty != null ? { frequency_penalty: body.frequency_penalty } : {}),
    ...(body.presence_penalty != null ? { presence_penalty: body.presence_penalty } : {}),
    ...(body.top_logprobs != null ? { top_logprobs: body.top_logprobs } : {}),
    ...(responseFormat ? { response_format: responseFormat } : {}),
    ...(reasoning ? { reasoning } : {}),
  };
  const request: InferenceRequest = {
    format: 'responses',
    ...routingFields(body, plugins),
    params,
    echo: {
      instructions: body.instructions ?? null,
      max_output_tokens: body.max_output_tokens ?? null,
      max_tool_calls: body.max_tool_calls ?? null,
      metadata: body.metadata ?? {},
      temperature: body.temperature ?? null,
      top_p: body.top_p ?? null,
      frequency_penalty: body.frequency_penalty ?? null,
      presence_penalty: body.presence_penalty ?? null,
      parallel_tool_calls: body.parallel_tool_calls ?? true,
      tool_choice: body.tool_choice ?? 'auto',
      tools: body.tools ?? [],
      text: body.text ?? { format: { type: 'text' } },
      reasoning: body.reasoning ?? null,
      truncation: body.truncation ?? 'disabled',
      top_logprobs: body.top_logprobs ?? 0,
      user: body.user ?? null,
      store: false,
      background: false,
    },
  };
  if (body.stream === true && body.debug?.echo_upstream_body === true) request.echoUpstreamBody = true;
  return request;
}
