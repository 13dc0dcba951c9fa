import { signWebhookPayload, standardWebhookSignature } from '../sdk/verify-webhook.ts';

// The sender signs with the same function the merchant SDK verifies with, so the two cannot drift.

export const USER_AGENT = 'chaingate-webhooks/1';

export interface WebhookHeadersInput {
  eventId: string;
  eventType: string;
  /** The merchant point's apiSecret as it is now (rotation applies to the next attempt). */
  apiSecret: string;
  /** The exact bytes that will be sent. */
  body: Buffer;
  /** Unix seconds of this attempt. */
  timestamp: number;
  attemptNumber: number;
}

/** Headers of one attempt; re-made (re-signed) for every attempt over the bytes sent. */
export function webhookHeaders(input: WebhookHeadersInput): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'User-Agent': USER_AGENT,
    'X-Webhook-Id': input.eventId,
    'X-Webhook-Event': input.eventType,
    'X-Webhook-Timestamp': String(input.timestamp),
    'X-Webhook-Signature': signWebhookPayload(input.apiSecret, input.timestamp, input.body),
    'X-Webhook-Attempt': String(input.attemptNumber),
    // Standard Webhooks (https://www.standardwebhooks.com): the same event id on every attempt.
    'webhook-id': input.eventId,
    'webhook-timestamp': String(input.timestamp),
    'webhook-signature': standardWebhookSignature(input.apiSecret, input.eventId, input.timestamp, input.body),
  };
}
