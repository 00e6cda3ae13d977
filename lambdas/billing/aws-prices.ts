// Versioned table of the public AWS list prices the gateway needs to work out the infrastructure cost of
// serving one request: Lambda compute (GB-seconds, by architecture), Lambda requests, Lambda response
// streaming, DynamoDB on-demand request units and KMS API requests, per AWS Region.
//
// Every price is kept as a decimal string exactly as published, converted to USD per single unit by hand
// where AWS quotes it per million or per 10,000 (for example $0.20 per 1M requests -> '0.0000002'). Use
// priceToAttoUsd() to turn a price into an exact bigint of atto-dollars (1e-18 USD) for arithmetic; it parses
// the string and never goes through a float. Multiply usage by the atto price and round once, at the end.
//
// How to update:
//   1. Re-read the sources named in each region's `sources` (the AWS pricing pages, or the AWS Price List
//      API: https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/<Service>/current/<region>/index.json,
//      usage types such as USE2-Lambda-GB-Second-ARM, EU-WriteRequestUnits, <region>-KMS-Requests).
//   2. Change the figures, replace every `fallback:` source line you can now back with a region figure, and
//      keep REGION_FALLBACKS in step (the tests check that each listed field equals the us-east-1 figure).
//   3. Bump `version` (date of the reading plus a counter, e.g. '2026-11-22.2') and set `sourceDate`.
//
// Caveats:
//   - List prices only. The free tiers (1M Lambda requests and 400,000 GB-seconds a month, 100 GiB of
//     streamed response a month, 20,000 KMS requests a month, ...) are NOT subtracted: this is the marginal
//     cost of one request for an account already past them. Savings Plans and private pricing are ignored.
//   - Lambda compute uses the FIRST pricing tier only (x86_64: first 6 billion GB-seconds a month; arm64:
//     first 7.5 billion). Larger accounts pay less per GB-second on the tiers above.
//   - DynamoDB figures are on-demand, Standard table class, after the November 2024 on-demand price cut.
//     Transactional requests consume two units; that is for the caller to count, not this table.
//   - The official Lambda pricing page renders its rate tables client-side, so its text does not show the
//     per-GB-second and per-request rates; most figures here were read from third-party transcriptions of
//     the AWS Price List API that name the usage type and the date they were read. Each region's `sources`
//     says which figure came from where. Where no region-specific figure was found, the us-east-1 figure is
//     used and the source line starts with 'fallback:' (also listed in REGION_FALLBACKS).
//   - Byte units: AWS says "6MB" (free streamed bytes per response) and "GB" (streaming price). This table
//     reads them as 6 MiB and GiB (1024-based); AWS's pricing text does not say which, so that is an
//     assumption. The difference is below a micro-dollar per request.

export interface RegionPrices {
  region: string;
  /** USD per GB-second of Lambda compute, by architecture, as published */
  lambdaGbSecond: { arm64: string; x86_64: string };
  /** USD per Lambda request */
  lambdaRequest: string;
  /** USD per GB of response-streaming bytes beyond the first 6 MB of a response */
  lambdaStreamingGb: string;
  /** bytes of each streamed response that are free */
  lambdaStreamingFreeBytes: number;
  /** USD per write request unit / read request unit (on-demand, standard table class) */
  dynamodbWriteRequestUnit: string;
  dynamodbReadRequestUnit: string;
  /** USD per KMS API request (symmetric) */
  kmsRequest: string;
  initBilled: boolean;
  /** where each figure came from, e.g. "aws.amazon.com/lambda/pricing (us-east-1), read 2026-11-22" */
  sources: string[];
}

export interface PriceTable {
  version: string;
  sourceDate: string;
  regions: Record<string, RegionPrices>;
}

/** A price field of RegionPrices, by path (used to say which figures are fallbacks). */
export type PriceField =
  | 'lambdaGbSecond.arm64'
  | 'lambdaGbSecond.x86_64'
  | 'lambdaRequest'
  | 'lambdaStreamingGb'
  | 'dynamodbWriteRequestUnit'
  | 'dynamodbReadRequestUnit'
  | 'kmsRequest';

const READ = 'read 2026-11-22';

/** 6 MB, read as MiB (see the header). */
const STREAMING_FREE_BYTES = 6 * 1024 * 1024;

/**
 * From 1 August 2025 the INIT phase of on-demand invocations of ZIP-packaged functions on managed runtimes
 * is billed like INVOKE (AWS Compute Blog, "AWS Lambda standardizes billing for INIT Phase",
 * aws.amazon.com/blogs/compute/aws-lambda-standardizes-billing-for-init-phase). Custom runtimes, container
 * images and provisioned concurrency were already billed for INIT. The change is not regional.
 */
const INIT_BILLED = true;

/** USD per month for one customer managed KMS key ("Each AWS KMS key that you create in KMS costs $1/month",
 * aws.amazon.com/kms/pricing). Not a per-request cost; kept for completeness. Not checked per region. */
export const KMS_KEY_MONTH_USD = '1';

const US_EAST_1: RegionPrices = {
  region: 'us-east-1',
  lambdaGbSecond: { arm64: '0.0000133334', x86_64: '0.0000166667' },
  lambdaRequest: '0.0000002',
  lambdaStreamingGb: '0.008',
  lambdaStreamingFreeBytes: STREAMING_FREE_BYTES,
  dynamodbWriteRequestUnit: '0.000000625',
  dynamodbReadRequestUnit: '0.000000125',
  kmsRequest: '0.000003',
  initBilled: INIT_BILLED,
  sources: [
    'lambdaGbSecond, lambdaRequest: AWS Price List API (AWSLambda, us-east-1; Lambda-GB-Second tier 0-6e9 $0.0000166667, '
      + 'Lambda-GB-Second-ARM tier 0-7.5e9 $0.0000133334, Request/Request-ARM $0.0000002) as transcribed in third-party '
      + 'repository notes read from the API on 2025-10-28 and 2026-09-06; same rates in cloudchipr.com/blog/aws-lambda-pricing '
      + `(us-east-1); ${READ}`,
    'lambdaStreamingGb: AWS Price List API (AWSLambda, us-east-1, "Processed bytes for streamed response", '
      + `$0.008 per Processed-Gigabyte, x86 and ARM) as transcribed in a third-party repository note of 2025-10-28; ${READ}`,
    'lambdaStreamingFreeBytes: "the first 6MB per request free" (cloudchipr.com/blog/aws-lambda-pricing); '
      + `docs.aws.amazon.com/lambda/latest/dg/configuration-response-streaming.html only says streaming "incurs a cost"; ${READ}`,
    'dynamodb*: $0.625 per million WRU, $0.125 per million RRU (aws.amazon.com/dynamodb/pricing/on-demand as quoted by a '
      + 'third-party repository note "checked 2026-10-04"; AWS Price List API WriteRequestUnits $0.000000625, '
      + `ReadRequestUnits $0.000000125 as transcribed 2026-09-06; airbyte.com DynamoDB pricing article); ${READ}`,
    'kmsRequest: $0.03 per 10,000 symmetric requests (third-party summaries of aws.amazon.com/kms/pricing: wring.co, '
      + 'factualminds.com "us-east-1, June 2026", cloudburn.io; the text of aws.amazon.com/kms/pricing read here shows the '
      + `$1/month key price and the 20,000 free requests but not the request rate); ${READ}`,
    `initBilled: aws.amazon.com/blogs/compute/aws-lambda-standardizes-billing-for-init-phase (effective 2025-08-01); ${READ}`,
  ],
};

/** A region's figure that is really us-east-1's: one source line saying so. */
const fallback = (fields: string, note?: string): string =>
  `fallback: ${fields} = us-east-1 figure, no region-specific figure found${note ? ` (${note})` : ''}; ${READ}`;

const REGIONS: RegionPrices[] = [
  US_EAST_1,
  {
    region: 'us-east-2',
    lambdaGbSecond: { arm64: '0.0000133334', x86_64: '0.0000166667' },
    lambdaRequest: '0.0000002',
    lambdaStreamingGb: US_EAST_1.lambdaStreamingGb,
    lambdaStreamingFreeBytes: STREAMING_FREE_BYTES,
    dynamodbWriteRequestUnit: '0.000000625',
    dynamodbReadRequestUnit: '0.000000125',
    kmsRequest: US_EAST_1.kmsRequest,
    initBilled: INIT_BILLED,
    sources: [
      'lambdaGbSecond, lambdaRequest: AWS Price List API (USE2-Lambda-GB-Second-ARM $0.0000133334, USE2-Lambda-GB-Second '
        + `$0.0000166667, USE2-Request $0.0000002) as transcribed in a third-party repository note read 2026-08-11; ${READ}`,
      'dynamodb*: AWS Price List API (AmazonDynamoDB us-east-2, publication 2026-09-11: USE2-WriteRequestUnits $0.625/M, '
        + `USE2-ReadRequestUnits $0.125/M) as transcribed in a third-party repository note read 2026-09-29; ${READ}`,
      fallback('lambdaStreamingGb, kmsRequest'),
      `initBilled: see us-east-1 (not regional); ${READ}`,
    ],
  },
  {
    region: 'us-west-2',
    lambdaGbSecond: { arm64: US_EAST_1.lambdaGbSecond.arm64, x86_64: '0.0000166667' },
    lambdaRequest: '0.0000002',
    lambdaStreamingGb: US_EAST_1.lambdaStreamingGb,
    lambdaStreamingFreeBytes: STREAMING_FREE_BYTES,
    dynamodbWriteRequestUnit: US_EAST_1.dynamodbWriteRequestUnit,
    dynamodbReadRequestUnit: US_EAST_1.dynamodbReadRequestUnit,
    kmsRequest: US_EAST_1.kmsRequest,
    initBilled: INIT_BILLED,
    sources: [
      'lambdaGbSecond.x86_64, lambdaRequest: USW2-Lambda-GB-Second $0.0000166667 and USW2-Request $0.0000002, seen only in a '
        + `third-party test fixture labelled "Prices as AWS publishes them" (weak source); ${READ}`,
      fallback('lambdaGbSecond.arm64, lambdaStreamingGb, dynamodbWriteRequestUnit, dynamodbReadRequestUnit, kmsRequest'),
      `initBilled: see us-east-1 (not regional); ${READ}`,
    ],
  },
  {
    region: 'eu-west-1',
    lambdaGbSecond: { arm64: US_EAST_1.lambdaGbSecond.arm64, x86_64: '0.0000166667' },
    lambdaRequest: '0.0000002',
    lambdaStreamingGb: US_EAST_1.lambdaStreamingGb,
    lambdaStreamingFreeBytes: STREAMING_FREE_BYTES,
    dynamodbWriteRequestUnit: '0.000000705',
    dynamodbReadRequestUnit: '0.0000001415',
    kmsRequest: US_EAST_1.kmsRequest,
    initBilled: INIT_BILLED,
    sources: [
      'lambdaGbSecond.x86_64, lambdaRequest: AWS Price List API (AWSLambda 20261001184746/eu-west-1: EU-Lambda-GB-Second '
        + 'through 6e9 $0.0000166667, EU-Request $0.0000002) as snapshotted in github.com/henderjm/world-cup-sweepstake '
        + `docs/costs/aws-ireland-rates.json ("checked" 2026-10-04); ${READ}`,
      'dynamodb*: same snapshot (AmazonDynamoDB 20260911124422/eu-west-1: EU-WriteRequestUnits $0.0000007050, '
        + 'EU-ReadRequestUnits $0.0000001415); a second third-party file agrees ($0.705 / $0.1415 per million, eu-west-1); '
        + READ,
      fallback('lambdaGbSecond.arm64, lambdaStreamingGb, kmsRequest'),
      `initBilled: see us-east-1 (not regional); ${READ}`,
    ],
  },
  {
    region: 'eu-central-1',
    lambdaGbSecond: { arm64: '0.0000133334', x86_64: '0.0000166667' },
    lambdaRequest: '0.0000002',
    lambdaStreamingGb: US_EAST_1.lambdaStreamingGb,
    lambdaStreamingFreeBytes: STREAMING_FREE_BYTES,
    dynamodbWriteRequestUnit: '0.0000007625',
    dynamodbReadRequestUnit: '0.0000001525',
    kmsRequest: US_EAST_1.kmsRequest,
    initBilled: INIT_BILLED,
    sources: [
      'dynamodb*, lambdaGbSecond.arm64, lambdaRequest: "from the public regional AWS Price List (retrieved 2026-09-11)", '
        + 'eu-central-1: WRU $0.0000007625, RRU $0.0000001525, Lambda ARM GB-second $0.0000133334, request $0.0000002 '
        + `(third-party repository script and cost note); ${READ}`,
      'lambdaGbSecond.x86_64: EUC1-Lambda-GB-Second tier 1 $0.0000166667 "AWS Pricing API" (third-party repository cost '
        + `note); ${READ}`,
      fallback('lambdaStreamingGb, kmsRequest'),
      `initBilled: see us-east-1 (not regional); ${READ}`,
    ],
  },
  {
    region: 'ap-southeast-1',
    lambdaGbSecond: { arm64: '0.0000133334', x86_64: '0.0000166667' },
    lambdaRequest: '0.0000002',
    lambdaStreamingGb: US_EAST_1.lambdaStreamingGb,
    lambdaStreamingFreeBytes: STREAMING_FREE_BYTES,
    dynamodbWriteRequestUnit: US_EAST_1.dynamodbWriteRequestUnit,
    dynamodbReadRequestUnit: US_EAST_1.dynamodbReadRequestUnit,
    kmsRequest: US_EAST_1.kmsRequest,
    initBilled: INIT_BILLED,
    sources: [
      'lambdaGbSecond, lambdaRequest: AWS Price List API, regionCode ap-southeast-1, queried 2026-08-12 '
        + '(APS1-Lambda-GB-Second-ARM tier 1 $0.0000133334, APS1-Request-ARM $0.0000002, APS1-Lambda-GB-Second tier 1 '
        + `$0.0000166667, APS1-Request $0.0000002) as transcribed in a third-party repository cost review; ${READ}`,
      fallback(
        'lambdaStreamingGb, dynamodbWriteRequestUnit, dynamodbReadRequestUnit, kmsRequest',
        'older third-party provisioned-capacity tables price Singapore DynamoDB above us-east-1, so treat the DynamoDB pair as a '
          + 'probable lower bound',
      ),
      `initBilled: see us-east-1 (not regional); ${READ}`,
    ],
  },
  {
    region: 'ap-northeast-1',
    lambdaGbSecond: { arm64: US_EAST_1.lambdaGbSecond.arm64, x86_64: '0.0000166667' },
    lambdaRequest: '0.0000002',
    lambdaStreamingGb: US_EAST_1.lambdaStreamingGb,
    lambdaStreamingFreeBytes: STREAMING_FREE_BYTES,
    dynamodbWriteRequestUnit: '0.000000715',
    dynamodbReadRequestUnit: '0.0000001425',
    kmsRequest: '0.000003',
    initBilled: INIT_BILLED,
    sources: [
      'lambdaGbSecond.x86_64, lambdaRequest, dynamodb*, kmsRequest: AWS Price List API ap-northeast-1, downloaded 2026-09-23 '
        + '(APN1-Lambda-GB-Second tier 1 $0.0000166667, APN1-Request $0.0000002, APN1-WriteRequestUnits $0.000000715, '
        + `APN1-ReadRequestUnits $0.0000001425, ap-northeast-1-KMS-Requests $0.000003) per a third-party cost model; ${READ}`,
      fallback(
        'lambdaGbSecond.arm64, lambdaStreamingGb',
        'a third-party test fixture shows APN1-Lambda-GB-Second-ARM $0.0000133334, the same figure',
      ),
      `initBilled: see us-east-1 (not regional); ${READ}`,
    ],
  },
];

/** Per region, the fields that carry the us-east-1 figure because no region-specific one was found. */
export const REGION_FALLBACKS: Readonly<Record<string, readonly PriceField[]>> = deepFreeze({
  'us-east-1': [],
  'us-east-2': ['lambdaStreamingGb', 'kmsRequest'],
  'us-west-2': ['lambdaGbSecond.arm64', 'lambdaStreamingGb', 'dynamodbWriteRequestUnit', 'dynamodbReadRequestUnit', 'kmsRequest'],
  'eu-west-1': ['lambdaGbSecond.arm64', 'lambdaStreamingGb', 'kmsRequest'],
  'eu-central-1': ['lambdaStreamingGb', 'kmsRequest'],
  'ap-southeast-1': ['lambdaStreamingGb', 'dynamodbWriteRequestUnit', 'dynamodbReadRequestUnit', 'kmsRequest'],
  'ap-northeast-1': ['lambdaGbSecond.arm64', 'lambdaStreamingGb'],
});

export const PRICE_TABLE: PriceTable = deepFreeze({
  version: '2026-11-22.1',
  sourceDate: '2026-11-22',
  regions: Object.fromEntries(REGIONS.map((prices) => [prices.region, prices])),
});

const DEFAULT_REGION = 'us-east-1';

/** The prices of a region; an unknown region (including 'local') gets us-east-1's, with `fallback: true`. */
export function pricesFor(region: string): { prices: RegionPrices; fallback: boolean } {
  const known = Object.hasOwn(PRICE_TABLE.regions, region) ? PRICE_TABLE.regions[region] : undefined;
  if (known) return { prices: known, fallback: false };
  const prices = PRICE_TABLE.regions[DEFAULT_REGION];
  if (!prices) throw new Error(`price table has no ${DEFAULT_REGION} entry`);
  return { prices, fallback: true };
}

const ATTO_DIGITS = 18;
const DECIMAL = /^(0|[1-9][0-9]*)(?:\.([0-9]+))?$/;

/**
 * A non-negative decimal string ('0.0000133334', '12.5', '1') as an exact bigint of atto-dollars (1e-18 USD).
 * Throws on anything else: signs, exponents, empty strings, stray dots or spaces, or more than 18 decimals
 * (which could not be represented exactly).
 */
export function priceToAttoUsd(decimal: string): bigint {
  const match = DECIMAL.exec(decimal);
  if (!match) throw new Error(`not a plain non-negative decimal price: '${decimal}'`);
  const whole = match[1] ?? '0';
  const fraction = match[2] ?? '';
  if (fraction.length > ATTO_DIGITS) throw new Error(`price has more than ${ATTO_DIGITS} decimals: '${decimal}'`);
  return BigInt(whole) * 10n ** BigInt(ATTO_DIGITS) + BigInt(fraction.padEnd(ATTO_DIGITS, '0') || '0');
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
    Object.freeze(value);
  }
  return value;
}
