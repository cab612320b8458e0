// The contract between the engine and model inference. The engine speaks only these types; inference/ maps them to
// the AI SDK and its providers, and falls back across providers on retryable failures.

/** A tool call the model asked for. `input` is unvalidated JSON; the caller validates it with the tool's schema. */
export interface ToolCall {
  id: string;
  name: string;
  input: unknown;
}

/** One message of a conversation, provider-neutral. */
export type ChatMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; toolName: string; content: string; isError: boolean };

/** A tool the model may call: name, description and a JSON Schema of its input (an object schema). */
export interface ToolSpec {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** One model call: no tool is executed by inference; tool calls come back to the caller. */
export interface InferenceRequest {
  system: string;
  messages: ChatMessage[];
  tools: ToolSpec[];
  signal?: AbortSignal;
  /** For logs: which engine session asks. */
  sessionId?: string;
}

/** Token counts of one call. */
export interface InferenceUsage {
  inputTokens: number;
  outputTokens: number;
}

/** What the model answered. */
export interface InferenceResult {
  text: string;
  toolCalls: ToolCall[];
  /** `stop`, `tool-calls`, `length`, … as the AI SDK reports it. */
  finishReason: string;
  /** The provider id that answered (after any fallback). */
  provider: string;
  model: string;
  usage?: InferenceUsage;
}

/** Model inference with fallback across the configured providers. */
export interface Inference {
  /** True when at least one provider is configured. */
  readonly available: boolean;
  /**
   * Calls the first provider; a retryable failure (429, 5xx, timeout, connection error) moves to the next one and is
   * logged. Throws NoProviderError when none is configured, InferenceError when every attempt failed (or a
   * non-retryable error such as a 400 ended it).
   */
  complete(request: InferenceRequest): Promise<InferenceResult>;
}

/** No provider is configured: the engine answers "No inference provider available." */
export class NoProviderError extends Error {
  constructor(message = 'No inference provider available.') {
    super(message);
    this.name = 'NoProviderError';
  }
}

/** Every attempt failed: the engine answers "Inference failed." */
export class InferenceError extends Error {
  /** One line per provider tried: `<id>: <reason>`. */
  readonly attempts: string[];

  constructor(message: string, attempts: string[]) {
    super(message);
    this.name = 'InferenceError';
    this.attempts = attempts;
  }
}
