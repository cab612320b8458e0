// Reading a JSONL log without loading all of it: its first record, or its records from the last one backwards.
// Restore uses these so that it parses only the lines it needs (the descriptor and the tail of each log).
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { LogRecord } from './jsonl-log.ts';
import { parseLine } from './jsonl-log.ts';

/** What a backward scan went through. */
export interface ScanReport {
  /** Records handed to the visitor. */
  visited: number;
  /** Lines that did not parse (a torn last line included); they are skipped, never fatal. */
  malformed: number;
  /** True when the scan reached the first line of the file. */
  reachedStart: boolean;
}

const NEWLINE = 0x0a;

function readAt(fd: number, position: number, length: number): Buffer {
  const buffer = Buffer.alloc(length);
  let offset = 0;
  while (offset < length) {
    const n = readSync(fd, buffer, offset, length - offset, position + offset);
    if (n === 0) break;
    offset += n;
  }
  return buffer.subarray(0, offset);
}

/**
 * Reads and parses the first line of the log at `path`. Returns null when the file is empty, its first line is not
 * complete (no newline within `maxBytes`) or does not parse.
 */
export function readFirstRecord(path: string, maxBytes = 1 << 20): LogRecord | null {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    let length = Math.min(size, 4096);
    for (;;) {
      const data = readAt(fd, 0, length);
      const end = data.indexOf(NEWLINE);
      if (end >= 0) return parseLine(data.subarray(0, end).toString('utf8'));
      if (length >= size || length >= maxBytes) return null;
      length = Math.min(size, maxBytes, length * 4);
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Asked before each line: bytes that the records still wanted must contain (say, their type), or null for every
 * record. Lines without them are passed over unparsed and unseen (neither visited nor counted as malformed): the scan
 * jumps from one line holding them to the previous one, so a visitor that only needs some records does not pay for
 * reading the others line by line.
 */
export type LineNeedle = () => Buffer | null;

/**
 * Hands the records of the log at `path` to `visit` from the last to the first, reading the file backwards in
 * growing chunks; stops as soon as `visit` returns false. A last line without its newline (torn by a crash) and
 * lines that do not parse are skipped and counted. With `needle`, lines without its bytes are passed over unparsed.
 * Returns what the scan went through.
 */
export function scanBackward(
  path: string,
  visit: (record: LogRecord) => boolean,
  chunkBytes = 16_384,
  needle?: LineNeedle,
): ScanReport {
  const report: ScanReport = { visited: 0, malformed: 0, reachedStart: false };
  const fd = openSync(path, 'r');
  try {
    let position = fstatSync(fd).size;
    let chunk = chunkBytes;
    // `pending` holds the unvisited bytes [position, …); once the tail is cut it is empty or ends with a newline.
    let pending: Buffer = Buffer.alloc(0);
    const readMore = (): void => {
      const size = Math.min(chunk, position);
      position -= size;
      const data = readAt(fd, position, size);
      pending = pending.length > 0 ? Buffer.concat([data, pending]) : data;
      chunk = Math.min(chunk * 2, 1 << 20);
    };
    // Cut the bytes after the last newline: a line torn by a crash.
    for (;;) {
      if (position > 0) readMore();
      const lastNewline = pending.lastIndexOf(NEWLINE);
      if (lastNewline === -1 && position > 0) continue;
      if (lastNewline + 1 < pending.length) report.malformed += 1;
      pending = pending.subarray(0, lastNewline + 1);
      break;
    }
    for (;;) {
      // Visit every line whose start is known: after a newline inside `pending`, or at the start of the file.
      let lineEnd = pending.length - 1;
      while (lineEnd >= 0) {
        const wanted = needle?.();
        if (wanted) {
          // The needle holds no newline, so a match before lineEnd lies inside one line, which ends at the next newline.
          const at = lineEnd > 0 ? pending.lastIndexOf(wanted, lineEnd - 1) : -1;
          if (at === -1) {
            // No whole line left here holds it: keep only the first line, whose start comes with the next chunk.
            lineEnd = position > 0 ? pending.indexOf(NEWLINE) : -1;
            break;
          }
          lineEnd = pending.indexOf(NEWLINE, at);
        }
        const previous = lineEnd === 0 ? -1 : pending.lastIndexOf(NEWLINE, lineEnd - 1);
        if (previous === -1 && position > 0) break;
        const line = pending.subarray(previous + 1, lineEnd);
        lineEnd = previous;
        if (line.length === 0) continue;
        const record = parseLine(line.toString('utf8'));
        if (!record) {
          report.malformed += 1;
          continue;
        }
        report.visited += 1;
        if (!visit(record)) return report;
      }
      pending = pending.subarray(0, lineEnd + 1);
      if (position === 0) {
        report.reachedStart = true;
        return report;
      }
      readMore();
    }
  } finally {
    closeSync(fd);
  }
}
