// The AWS SDK's logger middleware filters every command's input and output for sensitive fields (walking
// the whole schema) before handing them to the client's logger, even the default logger that drops them:
// 58 µs of CPU per request in a profile of the gateway (when pages were lists of maps). No client of ours
// sets a logger, so the middleware is removed; errors still reach the caller, which logs what matters.
interface WithMiddlewareStack {
  middlewareStack: { remove(name: string): boolean };
}

export function withoutSdkLogging<T extends WithMiddlewareStack>(client: T): T {
  client.middlewareStack.remove('loggerMiddleware');
  return client;
}
