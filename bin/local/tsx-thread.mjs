// A worker thread's entry that loads TypeScript through tsx, as npm start does, whatever loader the host
// thread runs under (tsx under npm start and the bench, Jest's in the tests): it registers tsx in this
// thread, then imports the module named in workerData.module (a file URL).
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.module);
