// The customer-managed KMS key of the vault (workspace and intern secrets, observability destinations' secrets)
// and BYOK envelope encryption: yearly rotation, and a key policy under which no principal can use it without
// the gateway's encryption context (organization, workspace, intern, purpose), so every data key stays bound to
// the vault it was made for.
import { RemovalPolicy } from 'aws-cdk-lib';
import { Effect, PolicyStatement, AnyPrincipal, type IRole } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import type { VaultRef } from '../lambdas/vault/index.js';

type VaultPurpose = VaultRef['purpose'];

/** The encryption context keys of every data key (lambdas/vault/envelope.ts, encryptionContextOf). */
export const ENCRYPTION_CONTEXT_KEYS = ['organization', 'workspace', 'intern', 'purpose'] as const;
export const DATA_KEY_ACTIONS = ['kms:GenerateDataKey', 'kms:Decrypt'] as const;

/**
 * Every purpose a data key is made for (the `purpose` of the encryption context): a Record over the vault's own
 * type, so a purpose added there and not here fails to compile instead of being refused by KMS on AWS only.
 */
const PURPOSES: Record<VaultPurpose, string> = {
  vault: 'workspace and intern vaults',
  byok: 'BYOK provider credentials',
  observability: 'observability destinations\' secret config fields',
  'private-endpoint': 'private endpoints\' upstream API keys',
};
export const VAULT_PURPOSES = Object.keys(PURPOSES) as VaultPurpose[];

function contextConditions(purposes: readonly VaultPurpose[]) {
  return {
    // Every request names all four keys, and no others.
    'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': [...ENCRYPTION_CONTEXT_KEYS] },
    Null: Object.fromEntries(ENCRYPTION_CONTEXT_KEYS.map((key) => [`kms:EncryptionContext:${key}`, 'false'])),
    StringEquals: { 'kms:EncryptionContext:purpose': [...purposes] },
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

  /** Lets a function make and open data keys of every purpose, only with the gateway's encryption context. */
  grantDataKeys(role: IRole): void {
    this.grant(role, 'VaultDataKeys', [...DATA_KEY_ACTIONS], VAULT_PURPOSES);
  }

  /**
   * Lets a function only open data keys made for the given purposes (kms:Decrypt), with the gateway's
   * encryption context: for a function that releases secrets others stored, and never creates a vault.
   */
  grantOpenDataKeys(role: IRole, purposes: readonly VaultPurpose[]): void {
    this.grant(role, 'VaultOpenDataKeys', ['kms:Decrypt'], purposes);
  }

  private grant(role: IRole, sid: string, actions: string[], purposes: readonly VaultPurpose[]): void {
    role.addToPrincipalPolicy(new PolicyStatement({
      sid,
      effect: Effect.ALLOW,
      actions,
      resources: [this.key.keyArn],
      conditions: contextConditions(purposes),
    }));
    this.key.addToResourcePolicy(new PolicyStatement({
      effect: Effect.ALLOW,
      principals: [role],
      actions,
      resources: ['*'],
      conditions: contextConditions(purposes),
    }));
  }
}
