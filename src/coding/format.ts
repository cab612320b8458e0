// Plain-text formatting shared by every surface that talks about coding sessions (operations, notifications).

/** Formats milliseconds as "1h 2m", "3m 12s" or "45s" (negative counts as 0). */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  return `${Math.floor(m / 60)}h ${m % 60}m`;
}

/** Flattens whitespace to single spaces and shortens `text` to `max` characters, marking the cut with "…". */
export function truncate(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
