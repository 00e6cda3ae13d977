// A Bedrock endpoint over plain HTTP is a local fake (npm start's simulator), never AWS's: its clients sign
// with any key, since npm start has no AWS account and the SDK's credential chain would find nothing.

/** A plain-http endpoint: a local fake of Bedrock (the simulator), never AWS's. */
export function isLocalFake(endpoint: string | undefined): boolean {
  return endpoint?.startsWith('http:') === true;
}

/** What requests to a local fake are signed with. */
export const LOCAL_FAKE_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };
