// The wire format of the fake Telegram Bot API: request parameters from JSON, urlencoded or multipart bodies and the
// query string (form values that look like JSON are parsed, as Telegram does; a multipart file part is kept as a
// FakeUpload, parsed by Node's own `Response.formData()`), and the description of an error answer.
import type { IncomingMessage } from 'node:http';

/** A file uploaded in a multipart body: the part's file name, type and bytes. */
export interface FakeUpload {
  fileName: string;
  contentType: string;
  bytes: Buffer;
}

/** True for a parameter that is an uploaded file. */
export function isUpload(value: unknown): value is FakeUpload {
  return typeof value === 'object' && value !== null && Buffer.isBuffer((value as { bytes?: unknown }).bytes);
}

/** Parameters of one Bot API call. */
export type Params = Record<string, unknown>;

/** A scripted error answer. */
export interface FakeFailure {
  status: number;
  description?: string;
  /** For 429: seconds, sent as `parameters.retry_after`. */
  retryAfter?: number;
}

/** Telegram's description for an error answer, unless the failure gives its own. */
export function descriptionFor(failure: FakeFailure): string {
  if (failure.description) return failure.description;
  switch (failure.status) {
    case 429:
      return `Too Many Requests: retry after ${failure.retryAfter ?? 1}`;
    case 409:
      return 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running';
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden: bot was blocked by the user';
    case 400:
      return 'Bad Request: chat not found';
    default:
      return 'Internal Server Error';
  }
}

function coerce(value: string): unknown {
  const trimmed = value.trim();
  if (/^[[{]/.test(trimmed) || /^-?\d+$/.test(trimmed) || trimmed === 'true' || trimmed === 'false') {
    try {
      return JSON.parse(trimmed);
    } catch {
      return value;
    }
  }
  return value;
}

async function parseMultipart(body: Buffer, contentType: string): Promise<Params> {
  const form = await new Response(new Uint8Array(body), { headers: { 'content-type': contentType } }).formData();
  const params: Params = {};
  for (const [name, value] of form) {
    params[name] =
      typeof value === 'string'
        ? coerce(value)
        : { fileName: value.name, contentType: value.type, bytes: Buffer.from(await value.arrayBuffer()) };
  }
  return params;
}

/** Reads every parameter of a call: the query string, then the body (JSON, form or multipart). */
export async function readParams(req: IncomingMessage, query: URLSearchParams): Promise<Params> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const bytes = Buffer.concat(chunks);
  const body = bytes.toString('utf8');
  const params: Params = {};
  for (const [key, value] of query) params[key] = coerce(value);
  const type = req.headers['content-type'] ?? '';
  if (body.trim() === '') return params;
  if (type.includes('application/json')) return { ...params, ...(JSON.parse(body) as Params) };
  if (type.includes('multipart/form-data')) return { ...params, ...(await parseMultipart(bytes, type)) };
  for (const [key, value] of new URLSearchParams(body)) params[key] = coerce(value);
  return params;
}
