import type { Inference, InferenceRequest, InferenceResult, ToolCall } from '../../src/inference/types.ts';

/** What the scripted model answers to one request. */
export type ScriptStep =
  | { text?: string; toolCalls?: ToolCall[]; finishReason?: string }
  /** Thrown from complete(). */
  | Error
  /** Never answers (until the request's signal aborts): a model call cut off by a crash. */
  | 'hang'
  /** Answers when the test releases it. */
  | Gate;

/** A step the test releases by hand. */
export class Gate {
  #release: ((step: ScriptStep) => void) | null = null;
  #entered: (() => void)[] = [];
  #waiting: Promise<ScriptStep> | null = null;
  entered = false;

  /** Used by ScriptedInference: waits for release(). */
  wait(): Promise<ScriptStep> {
    this.entered = true;
    for (const resolve of this.#entered.splice(0)) resolve();
    this.#waiting ??= new Promise((resolve) => (this.#release = resolve));
    return this.#waiting;
  }

  /** Resolves once the model call has reached this gate. */
  reached(): Promise<void> {
    return this.entered ? Promise.resolve() : new Promise((resolve) => this.#entered.push(resolve));
  }

  /** Lets the held call answer with `step`. */
  release(step: ScriptStep = { text: 'released' }): void {
    if (!this.#release) throw new Error('gate not reached yet');
    this.#release(step);
  }
}

type Handler = (request: InferenceRequest) => ScriptStep | undefined;

function lastUserText(request: InferenceRequest): string {
  for (let i = request.messages.length - 1; i >= 0; i -= 1) {
    const m = request.messages[i];
    if (m?.role === 'user') return m.content;
  }
  return '';
}

/**
 * An Inference for tests: answers from a script (steps consumed in order), then from a handler, then echoes the
 * last user message. Records every request (a copy of its messages).
 */
export class ScriptedInference implements Inference {
  available = true;
  readonly requests: InferenceRequest[] = [];
  #steps: ScriptStep[] = [];
  #handler: Handler | null = null;
  #listeners: (() => void)[] = [];

  /** Appends steps to the script. */
  script(...steps: ScriptStep[]): this {
    this.#steps.push(...steps);
    return this;
  }

  /** Answers requests the script does not cover (return undefined to fall back to the echo). */
  onRequest(handler: Handler): this {
    this.#handler = handler;
    return this;
  }

  /** Resolves once `count` requests were made. */
  async waitForRequests(count: number): Promise<void> {
    while (this.requests.length < count) await new Promise<void>((resolve) => this.#listeners.push(resolve));
  }

  async complete(request: InferenceRequest): Promise<InferenceResult> {
    this.requests.push({ ...request, messages: request.messages.map((m) => ({ ...m })), tools: [...request.tools] });
    for (const resolve of this.#listeners.splice(0)) resolve();
    let step: ScriptStep | undefined = this.#steps.shift() ?? this.#handler?.(request);
    step ??= { text: `echo: ${lastUserText(request)}` };
    if (step instanceof Gate) step = await step.wait();
    if (step === 'hang') {
      await new Promise<never>((_, reject) => {
        request.signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
      });
    }
    if (step instanceof Error) throw step;
    if (step === 'hang' || step instanceof Gate) throw new Error('unreachable');
    return {
      text: step.text ?? '',
      toolCalls: step.toolCalls ?? [],
      finishReason: step.finishReason ?? ((step.toolCalls?.length ?? 0) > 0 ? 'tool-calls' : 'stop'),
      provider: 'scripted',
      model: 'scripted-1',
    };
  }
}
