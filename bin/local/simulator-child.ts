// npm start's upstream simulator in a process of its own (bin/local/child.ts): it is the providers' side, so
// its work and its memory are not the gateway's. Its settings come in SIMULATOR_CHILD_OPTIONS (JSON); the S3
// endpoint Bedrock batch jobs use comes later (the S3 stand-in starts beside it), as an `s3` message.
import { startSimulator, type SimulatorOptions } from '../simulator/server.js';
import { parentChannel } from './child.js';

const channel = parentChannel();
const options = JSON.parse(process.env.SIMULATOR_CHILD_OPTIONS ?? '{}') as SimulatorOptions;
let s3Endpoint: string | undefined;
channel.answer('s3', (message) => {
  s3Endpoint = message.endpoint as string;
  return true;
});
startSimulator({ ...options, s3Endpoint: () => s3Endpoint }).then((simulator) => {
  channel.onStop(() => simulator.close());
  channel.ready({ url: simulator.url, port: simulator.port });
}, (error: unknown) => {
  channel.failed(error);
});
