// The test run's shared DynamoDB Local may die (a busy machine's OOM killer, a crash). Then every test
// would fail on its own with ECONNREFUSED and no hint why. Instead the global setup watches it: on an
// unexpected exit it prints DynamoDB Local's last output once and leaves a marker file, and every store
// the tests create fails with that one clear message.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DynamoDbLocal } from '../../bin/local/dynamodb-local.js';

export function watchStore(db: DynamoDbLocal, markerFile: string, report: (text: string) => void = (text) => { process.stderr.write(text); }): void {
  db.onUnexpectedExit((exit) => {
    const message = `The test run's DynamoDB Local (${db.endpoint}) died (${exit.signal ?? `exit code ${exit.code}`}); every test that needs the store fails from here on. Its last output:\n${exit.output.trimEnd() || '(none)'}\n`;
    writeFileSync(markerFile, message);
    report(`\n${message}\n`);
  });
}

/** The message of a dead store, if the store of this run has died. */
export function deadStoreMessage(markerFile: string | undefined = process.env.TEST_DYNAMODB_DEAD_FILE): string | undefined {
  return markerFile && existsSync(markerFile) ? readFileSync(markerFile, 'utf8') : undefined;
}

/** Requests of `client` that fail after the store died fail with that message instead of ECONNREFUSED. */
export function failClearlyWhenDead(client: DynamoDBClient | DynamoDBDocumentClient, markerFile?: string): void {
  client.middlewareStack.add((next) => async (args) => {
    try {
      return await next(args);
    } catch (err) {
      const dead = deadStoreMessage(markerFile);
      if (dead) throw new Error(dead, { cause: err });
      throw err;
    }
  }, { step: 'initialize', name: 'deadStoreMessage' });
}
