// Polls a condition until it holds, or fails the test after `timeoutMs`.
export async function waitFor(condition: () => boolean | Promise<boolean>, { timeoutMs = 5000, what = 'condition' }: { timeoutMs?: number; what?: string } = {}): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
