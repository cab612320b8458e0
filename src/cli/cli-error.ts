/** An error that ends the CLI with a message and an exit code (2: bad input, 1: anything else). */
export class CliError extends Error {
  readonly exitCode: number;

  constructor(message: string, exitCode: 1 | 2) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}
