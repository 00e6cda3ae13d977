// The body of POST /audio/speech (SPEC's Speech request; OpenRouter's, which @openrouter/sdk sends).
import * as z from 'zod';
import { modelIdSchema, sessionIdSchema, traceSchema, userSchema } from './common-schema.js';

/** The longest text any speech endpoint takes; each endpoint's own limit is checked in routing. */
export const MAX_SPEECH_CHARACTERS = 100_000;

const referencePart = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('input_audio'),
    input_audio: z.object({
      data: z.string().regex(/^data:audio\/[a-z0-9.+-]+;base64,[A-Za-z0-9+/=\s]+$/i, 'must be audio as a data URL (data:audio/<type>;base64,…)'),
      format: z.string().min(1).optional(),
    }),
  }),
  z.object({ type: z.literal('text'), text: z.string().min(1) }),
  z.object({ type: z.literal('image_url'), image_url: z.object({ url: z.string().min(1) }) }),
]);

export const speechRequestSchema = z.object({
  input: z.string().min(1, 'must not be empty').max(MAX_SPEECH_CHARACTERS),
  model: modelIdSchema,
  voice: z.string().min(1).optional(),
  /** pcm unless asked otherwise, as @openrouter/sdk defaults it. */
  response_format: z.enum(['mp3', 'pcm']).default('pcm'),
  speed: z.number().min(0.25).max(4).optional(),
  /** How to say it, as OpenAI's gpt-4o-mini-tts takes it (OpenAI's speech endpoints only). */
  instructions: z.string().min(1).max(4096).optional(),
  session_id: sessionIdSchema.optional(),
  user: userSchema.optional(),
  trace: traceSchema.optional(),
  provider: z.object({
    /** Options for one provider each, by provider slug: only the serving provider's go upstream. */
    options: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
  }).optional(),
  input_references: z.array(referencePart).max(6).optional(),
}).superRefine((body, ctx) => {
  const parts = body.input_references ?? [];
  if (!parts.length) return;
  const where = ['input_references'];
  const clips = parts.filter((part) => part.type === 'input_audio').length;
  const images = parts.filter((part) => part.type === 'image_url').length;
  if (images && parts.length !== images) {
    ctx.addIssue({ code: 'custom', path: where, message: 'reference audio (with transcripts) and a reference image cannot be mixed: send one image_url, or one to three input_audio clips' });
    return;
  }
  if (images) {
    if (images > 1) ctx.addIssue({ code: 'custom', path: where, message: `image mode takes exactly one image_url, got ${images}` });
    return;
  }
  if (clips === 0) {
    ctx.addIssue({ code: 'custom', path: where, message: 'a text part is the transcript of a reference clip: send the input_audio clip it belongs to' });
    return;
  }
  if (clips > 3) {
    ctx.addIssue({ code: 'custom', path: where, message: `audio mode takes one to three input_audio clips, got ${clips}` });
    return;
  }
  // One clip: its transcript before or after it. Several: each transcript right after its clip.
  if (clips === 1) {
    if (parts.length > 2) ctx.addIssue({ code: 'custom', path: where, message: 'one reference clip takes at most one transcript (a text part before or after it)' });
    return;
  }
  parts.forEach((part, index) => {
    if (part.type === 'text' && parts[index - 1]?.type !== 'input_audio') {
      ctx.addIssue({ code: 'custom', path: [...where, index], message: 'with several reference clips, each transcript (text part) must come right after its input_audio clip' });
    }
  });
});
export type SpeechRequest = z.infer<typeof speechRequestSchema>;
