// cdk-nag 3 (AwsSolutions pack) as a CDK policy-validation plugin, and the one way this app
// acknowledges a finding: on the narrowest construct, with a reason a reviewer can check.
import { Validations, type App } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';

/** The pack's plugin name; CDK files its findings under `AwsSolutions::<rule id>`. */
export const NAG_PACK = 'AwsSolutions';

/**
 * Runs the AwsSolutions rules when the app synthesizes. An unacknowledged error fails `cdk synth`
 * (and `app.synth()` in tests); warnings are listed in the validation report.
 */
export function addNagChecks(app: App): void {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
}

/**
 * @param ruleId the rule as cdk-nag names it, e.g. `AwsSolutions-L1`, or one finding of a rule,
 *   e.g. `AwsSolutions-IAM5[Resource::*]`.
 */
export function acknowledgeNag(scope: IConstruct, ruleId: string, reason: string): void {
  Validations.of(scope).acknowledge({ id: `${NAG_PACK}::${ruleId}`, reason });
}
