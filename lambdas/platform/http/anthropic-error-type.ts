// Anthropic's error types by HTTP status: the error envelope of POST /messages (errors.ts), the error
// event of its streams (inference/formats/to-messages.ts) and a failed batch item's error (app/batch-items.ts)
// name the same type for a status.

/** The `type` of an Anthropic error object for an HTTP status (Anthropic's API errors, and those of its SDKs). */
export function anthropicErrorType(status: number): string {
  switch (status) {
    case 400: case 422: return 'invalid_request_error';
    case 401: return 'authentication_error';
    case 402: return 'billing_error';
    case 403: return 'permission_error';
    case 404: return 'not_found_error';
    case 413: return 'request_too_large';
    case 408: case 504: case 524: return 'timeout_error';
    case 429: return 'rate_limit_error';
    case 529: return 'overloaded_error';
    // Anthropic's API has no other client-error types: the request's fault, not the server's.
    default: return status < 500 ? 'invalid_request_error' : 'api_error';
  }
}
