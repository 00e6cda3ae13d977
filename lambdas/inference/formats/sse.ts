// SSE framing for replies.
export const sseData = (value: unknown): string => `data: ${JSON.stringify(value)}\n\n`;
export const sseEvent = (event: string, value: unknown): string => `event: ${event}\ndata: ${JSON.stringify(value)}\n\n`;
export const SSE_DONE = 'data: [DONE]\n\n';
export const SSE_KEEPALIVE = ': keep-alive\n\n';
