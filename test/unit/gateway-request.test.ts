import { describe, expect, it } from '@jest/globals';
import { fromLambdaEvent } from '../../lambdas/platform/http/request.js';
import { httpEvent } from '../support/events.js';

describe('fromLambdaEvent', () => {
  it('keeps the first value of a repeated query parameter, under own names only', () => {
    const event = { ...httpEvent({ method: 'GET', path: '/api/v1/keys' }), rawQueryString: 'constructor=1&a=x&a=y&__proto__=z&toString=t' };
    const request = fromLambdaEvent(event);
    expect(request.query).toEqual({ constructor: '1', a: 'x', toString: 't' });
    expect(Object.getPrototypeOf(request.query)).toBe(Object.prototype);
  });

  it('has an empty query without a query string, and the body as bytes', () => {
    const request = fromLambdaEvent({ ...httpEvent({ method: 'POST', path: '/api/v1/keys/', body: { name: 'é' } }), rawQueryString: '' });
    expect(request.query).toEqual({});
    expect(request.path).toBe('/api/v1/keys');
    expect(request.body?.toString('utf8')).toBe('{"name":"é"}');
  });
});
