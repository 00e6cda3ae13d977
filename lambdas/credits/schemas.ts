// Wire shapes of the credits routes (docs/API.md "Credits"; shaped as the public OpenRouter API's
// GetCreditsResponse).
import * as z from 'zod';
import { usdAmount } from '../platform/http/usd-amount.js';

export const creditsReply = z.object({ data: z.object({ total_credits: z.number(), total_usage: z.number() }) });

export const addCreditsBody = z.strictObject({
  amount: usdAmount({ positive: true }).describe('USD to add, more than 0, rounded to the nearest nano-dollar (1e-9)'),
  organization_id: z.string().min(1).max(128).optional().describe('Organization to credit; defaults to the caller\'s own'),
  note: z.string().max(1024).optional().describe('Why (invoice number, promotion …); kept with the grant'),
});

export const addCreditsReply = z.object({
  data: z.object({
    organization_id: z.string(),
    total_credits: z.number(),
    total_usage: z.number(),
    grant: z.object({ id: z.string(), amount: z.number(), note: z.string().nullable(), created_at: z.string() }),
  }),
});
