// The header the CloudFront front door adds to every origin request (lib/front-door.ts): origins see their
// regional hostnames, and this is how they know a request came in on the global one.
export const FRONT_DOOR_HEADER = 'x-gateway-front-door';
