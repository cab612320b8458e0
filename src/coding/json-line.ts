// Decoding one stdout line of an agent CLI that prints JSON Lines: an object (Codex's app-server), with a `type` on each
// (Codex, Gemini).
import { z } from 'zod';

/** A line that is not what the CLI should print, and why. */
export interface MalformedLine {
  ok: false;
  error: string;
}

/** True for a plain object (not null, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}

/** Decodes a line as a JSON object; otherwise says why it is malformed (not JSON, not an object). */
export function decodeObjectLine(line: string): { ok: true; value: Record<string, unknown> } | MalformedLine {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return { ok: false, error: 'not JSON' };
  }
  return isObject(raw) ? { ok: true, value: raw } : { ok: false, error: 'not a JSON object' };
}

/** Decodes a line as a JSON object with a string `type`; otherwise says why it is malformed (not JSON, not an object, no type). */
export function decodeTypedLine(
  line: string,
): { ok: true; value: Record<string, unknown>; type: string } | MalformedLine {
  const decoded = decodeObjectLine(line);
  if (!decoded.ok) return decoded;
  const type = decoded.value.type;
  if (typeof type !== 'string') return { ok: false, error: 'no string "type"' };
  return { ok: true, value: decoded.value, type };
}

/** The reason a line of this `type` is malformed: its schema's issues on one line. */
export function schemaProblem(type: string, error: z.ZodError): MalformedLine {
  return { ok: false, error: `bad "${type}": ${z.prettifyError(error).replace(/\s+/g, ' ')}` };
}
