/** Exit codes, as documented in the README. */
export const ExitCode = {
  ok: 0,
  failure: 1,
  usage: 2,
  sideEffects: 3,
  divergence: 4,
} as const;

/** A problem the user can fix: printed as one line, the detail, then a hint — never a stack trace. */
export class UserError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
    readonly exitCode: number = ExitCode.usage,
  ) {
    super(message);
    this.name = 'UserError';
  }
}
