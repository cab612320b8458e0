// The auditor's verdict: `{"pass": bool, "criteria": [...], "gaps": [...], "testResults": "..."}`, found in free text.

export interface Verdict {
  pass: boolean;
  criteria: string[];
  gaps: string[];
  testResults: string;
  /** False when no verdict object was found: then `pass` is false and `gaps` says why. */
  parsed: boolean;
}

/** Only the tail of a long reply is searched (the verdict ends the reply). */
const MAX_SCAN_CHARS = 65_536;

export const UNPARSABLE_GAP =
  'The auditor did not give a verdict that could be read: no JSON object with a boolean "pass" was found at the end of its reply.';

export const UNNAMED_GAP =
  'The auditor failed the work without naming a gap: re-check every requirement of the issue and the tests.';

/** Index of the `}` closing the object that opens at `start`, honouring JSON strings; -1 when unbalanced. */
function matchingBrace(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i += 1) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i += 1;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{') depth += 1;
    else if (c === '}') {
      depth -= 1;
      if (depth === 0) return i;
    }
  }
  return -1;
}

function strings(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  const list = Array.isArray(value) ? value : [value];
  return list
    .map((v) => (typeof v === 'string' ? v : JSON.stringify(v)))
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/**
 * Finds the verdict in an auditor's reply: the last JSON object (nested objects and arrays allowed, code fences and
 * prose around it tolerated) that has a boolean `pass`. Objects nested inside a verdict are not candidates themselves.
 * A reply without one yields a failing verdict whose single gap says the verdict was unreadable.
 */
export function parseVerdict(reply: string): Verdict {
  const text = reply.length > MAX_SCAN_CHARS ? reply.slice(-MAX_SCAN_CHARS) : reply;
  let found: Record<string, unknown> | null = null;
  let i = text.indexOf('{');
  while (i !== -1) {
    const end = matchingBrace(text, i);
    let next = i + 1;
    if (end !== -1) {
      try {
        const value: unknown = JSON.parse(text.slice(i, end + 1));
        if (
          typeof value === 'object' &&
          value !== null &&
          !Array.isArray(value) &&
          typeof (value as { pass?: unknown }).pass === 'boolean'
        ) {
          found = value as Record<string, unknown>;
          next = end + 1;
        }
      } catch {
        // not JSON: look for an object starting further on (possibly inside this one)
      }
    }
    i = text.indexOf('{', next);
  }
  if (!found) return { pass: false, criteria: [], gaps: [UNPARSABLE_GAP], testResults: '', parsed: false };
  const testResults = found.testResults;
  const pass = found.pass as boolean;
  const gaps = strings(found.gaps);
  return {
    pass,
    criteria: strings(found.criteria),
    gaps: !pass && gaps.length === 0 ? [UNNAMED_GAP] : gaps,
    testResults:
      typeof testResults === 'string'
        ? testResults.trim()
        : testResults === undefined
          ? ''
          : JSON.stringify(testResults),
    parsed: true,
  };
}
