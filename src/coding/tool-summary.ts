import { truncate } from './format.ts';

const KEYS: [string, number][] = [
  ['file_path', 60],
  ['path', 60],
  ['command', 80],
  ['cmd', 80],
  ['pattern', 60],
  ['glob', 60],
  ['query', 60],
  ['url', 80],
];

/** A one-line summary of a tool call's input: the first of file_path, path, command, pattern, glob…, else the first string value. */
export function summarizeToolInput(input: unknown): string {
  if (typeof input === 'string') return truncate(input, 80);
  if (typeof input !== 'object' || input === null) return '';
  const record = input as Record<string, unknown>;
  for (const [key, max] of KEYS) {
    const value = record[key];
    if (typeof value === 'string' && value.length > 0) return truncate(value, max);
    if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return truncate(value.join(' '), max);
  }
  const first = Object.values(record).find((v) => typeof v === 'string' && v.length > 0);
  return typeof first === 'string' ? truncate(first, 60) : '';
}

/** The compact tool-use line: `🔧 Bash — npm test`. */
export function toolUseLine(name: string, input: unknown): string {
  const summary = summarizeToolInput(input);
  return summary ? `🔧 ${name} — ${summary}` : `🔧 ${name}`;
}
