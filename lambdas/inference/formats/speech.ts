// POST /audio/speech → InferenceRequest: the text is the prompt (so the reservation counts it, a byte a
// character at most), the voice, format, speed and references ride along as `speech`. session_id, user and
// trace are for observability only: nothing of them goes upstream.
import type { InferenceRequest } from '../inference-request.js';
import type { SpeechRequest } from './speech-schema.js';

export function fromSpeech(body: SpeechRequest): InferenceRequest {
  return {
    format: 'speech',
    models: [body.model],
    provider: undefined,
    routePartition: undefined,
    stream: true,
    serviceTier: null,
    sessionId: body.session_id,
    user: body.user,
    safetyIdentifier: undefined,
    metadata: undefined,
    trace: body.trace,
    plugins: [],
    params: {
      messages: [{ role: 'user', content: [{ type: 'text', text: body.input }] }],
      speech: {
        input: body.input,
        voice: body.voice,
        format: body.response_format,
        ...(body.speed !== undefined ? { speed: body.speed } : {}),
        ...(body.instructions !== undefined ? { instructions: body.instructions } : {}),
        references: body.input_references ?? [],
        ...(body.provider?.options ? { optionsByProvider: body.provider.options } : {}),
      },
    },
    echo: {},
  };
}
