// The delivery queue's redrive policy, shared by the CDK stack and npm start's stand-in.

/** Receives of a delivery message before SQS moves it to the dead-letter queue. */
export const DELIVERY_MAX_RECEIVES = 6;
