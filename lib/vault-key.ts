// The customer-managed KMS key of the vault and BYOK envelope encryption: yearly rotation, and a key policy
// under which no principal can use it without the gateway's encryption context (organization, workspace,
// intern, purpose), so every data key stays bound to the vault it was made for.
import { RemovalPolicy } from 'aws-cdk-lib';
import { Effect, PolicyStatement, AnyPrincipal, type IRole } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';

/** The encryption context keys of every data key (lambdas/vault/envelope.ts, encryptionContextOf). */
export const ENCRYPTION_CONTEXT_KEYS = ['organization', 'workspace', 'intern', 'purpose'] as const;
export const DATA_KEY_ACTIONS = ['kms:GenerateDataKey', 'kms:Decrypt'] as const;

function contextConditions() {
  return {
    // Every request names all four keys, and no others.
    'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': [...ENCRYPTION_CONTEXT_KEYS] },
    Null: Object.fromEntries(ENCRYPTION_CONTEXT_KEYS.map((key) => [`kms:EncryptionContext:${key}`, 'false'])),
    StringEquals: { 'kms:EncryptionContext:purpose': ['vault', 'byok'] },
  };
}

export class VaultKey extends Construct {
  readonly key: Key;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.key = new Key(this, 'Key', {
      description: 'Model gateway: envelope encryption of vault secrets and BYOK credentials',
      enableKeyRotation: true,
      alias: 'alias/model-gateway',
      // Losing the key loses every secret: keep it when the stack goes.
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // Data-key operations without the gateway's encryption context are refused for everyone.
    this.key.addToResourcePolicy(new PolicyStatement({
      sid: 'RequireGatewayEncryptionContext',
      effect: Effect.DENY,
      principals: [new AnyPrincipal()],
      actions: [...DATA_KEY_ACTIONS, 'kms:Encrypt', 'kms:ReEncrypt*', 'kms:GenerateDataKeyWithoutPlaintext'],
      resources: ['*'],
      conditions: { Null: { 'kms:EncryptionContext:purpose': 'true' } },
    }));
  }

  /** Lets a function make and open data keys, only with the gateway's encryption context. */
  grantDataKeys(role: IRole): void {
    role.addToPrincipalPolicy(new PolicyStatement({
      sid: 'VaultDataKeys',
      effect: Effect.ALLOW,
      actions: [...DATA_KEY_ACTIONS],
      resources: [this.key.keyArn],
      conditions: contextConditions(),
    }));
    this.key.addToResourcePolicy(new PolicyStatement({
      effect: Effect.ALLOW,
      principals: [role],
      actions: [...DATA_KEY_ACTIONS],
      resources: ['*'],
      conditions: contextConditions(),
    }));
  }
}
