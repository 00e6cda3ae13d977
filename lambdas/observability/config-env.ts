// Where deliveries are queued and how they are retried, from the environment (README, "Configuration").

export interface ObservabilityConfig {
  /** GATEWAY_OBSERVABILITY_QUEUE_URL; undefined: generations are not delivered (destinations can still be managed and tested). */
  queueUrl: string | undefined;
  /** GATEWAY_OBSERVABILITY_DLQ_URL: the dead-letter queue, where a delivery no retry can help goes at once; undefined: such deliveries are retried until the redrive policy moves them. */
  deadLetterUrl: string | undefined;
  /** SQS_ENDPOINT: set only for the local stand-in. */
  sqsEndpoint: string | undefined;
  /** GATEWAY_OBSERVABILITY_RETRY_SECONDS: the first retry's wait, doubled at each later one (default 5; 0: at once). */
  retryBaseSeconds: number;
  /** GATEWAY_OBSERVABILITY_TIMEOUT_MS: how long one delivery may take (default 10000). */
  timeoutMs: number;
  /** GATEWAY_OBSERVABILITY_PRIVATE_HOSTS=allow: destinations on private and loopback addresses are accepted (npm start sets it). */
  allowPrivateHosts: boolean;
}

export function observabilityConfigFromEnv(env: NodeJS.ProcessEnv = process.env): ObservabilityConfig {
  const retryText = env.GATEWAY_OBSERVABILITY_RETRY_SECONDS;
  const retryBaseSeconds = retryText === undefined || retryText === '' ? 5 : Number(retryText);
  if (!Number.isInteger(retryBaseSeconds) || retryBaseSeconds < 0 || retryBaseSeconds > 900) {
    throw new Error(`GATEWAY_OBSERVABILITY_RETRY_SECONDS must be a whole number of seconds from 0 to 900, got "${retryText}"`);
  }
  const timeoutText = env.GATEWAY_OBSERVABILITY_TIMEOUT_MS;
  const timeoutMs = timeoutText === undefined || timeoutText === '' ? 10_000 : Number(timeoutText);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 60_000) {
    throw new Error(`GATEWAY_OBSERVABILITY_TIMEOUT_MS must be a whole number of milliseconds from 1 to 60000, got "${timeoutText}"`);
  }
  return {
    timeoutMs,
    queueUrl: env.GATEWAY_OBSERVABILITY_QUEUE_URL || undefined,
    deadLetterUrl: env.GATEWAY_OBSERVABILITY_DLQ_URL || undefined,
    sqsEndpoint: env.SQS_ENDPOINT || undefined,
    retryBaseSeconds,
    allowPrivateHosts: env.GATEWAY_OBSERVABILITY_PRIVATE_HOSTS === 'allow',
  };
}
