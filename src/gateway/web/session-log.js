// Renders one record of a coding session's log (the SSE stream of GET /sessions/:ref/events) as a line of the view.
import { approvalOutcome } from './approval-panel.js';
import { cost, el } from './dom.js';

/** Every record type the session log holds; the stream names its events after them. */
export const RECORD_TYPES = [
  'created',
  'run',
  'status',
  'backend',
  'user',
  'output',
  'tool',
  'toolResult',
  'question',
  'permission',
  'permissionAnswer',
  'approval',
  'turn',
  'waiting',
  'warning',
  'exited',
  'foreground',
];

const INPUT_KEYS = ['command', 'file_path', 'path', 'pattern', 'url', 'query', 'description', 'prompt'];

function shorten(text, max) {
  const flat = String(text).replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** A one-line description of a tool's input: its most telling field, else compact JSON. */
export function toolInputSummary(input) {
  if (input && typeof input === 'object') {
    for (const key of INPUT_KEYS) {
      const value = input[key];
      if (typeof value === 'string' && value) return shorten(value, 160);
    }
  }
  try {
    return shorten(JSON.stringify(input) ?? '', 160);
  } catch {
    return '';
  }
}

function line(kind, ...children) {
  return el('li', { class: `rec rec-${kind}` }, ...children);
}

/**
 * Returns the list item for one log record, or null for records the view does not show.
 * @param {{ type: string, seq: number, [key: string]: unknown }} r
 */
export function renderRecord(r) {
  switch (r.type) {
    case 'created':
      return line('meta', `Session created in ${r.session?.workdir ?? '?'}`);
    case 'run':
      return line(
        'run',
        el('span', { class: 'tag', text: r.kind === 'resume' ? 'resume' : 'launch' }),
        ' ',
        el('span', { class: 'pre', text: String(r.prompt ?? '') }),
      );
    case 'user':
      // The prompt of a launch or resume is already shown by its `run` record.
      if (r.source === 'launch' || r.source === 'resume') return null;
      return line(
        'user',
        el('span', {
          class: 'tag',
          text: r.source === 'agent' ? 'orchestrator' : r.source === 'user' ? 'you' : String(r.source),
        }),
        ' ',
        el('span', { class: 'pre', text: String(r.text ?? '') }),
      );
    case 'output':
      return line('output', el('span', { class: 'pre', text: String(r.text ?? '') }));
    case 'tool':
      return line('tool', el('span', { class: 'tag', text: String(r.name) }), ' ', toolInputSummary(r.input));
    case 'toolResult':
      return r.isError ? line('tool-error', '↳ tool error: ', shorten(r.output ?? '', 300)) : null;
    case 'question':
      return line(
        'question',
        el('span', { class: 'tag', text: 'question' }),
        ' ',
        el('span', { class: 'pre', text: String(r.text ?? '') }),
      );
    case 'permission':
      return line(
        'question',
        el('span', { class: 'tag', text: 'permission' }),
        ` ${String(r.tool)}: ${toolInputSummary(r.input)}`,
      );
    case 'approval': {
      const a = r.approval ?? {};
      const tag = el('span', { class: 'tag', text: a.kind === 'question' ? 'question' : 'approval' });
      return a.status === 'pending'
        ? line('question', tag, ` ${String(a.summary ?? a.tool ?? '')} — asked (${String(a.id)})`)
        : line('meta', tag, ` ${String(a.summary ?? a.tool ?? '')} — ${approvalOutcome(a)}`);
    }
    case 'permissionAnswer':
      return line('meta', r.allow ? 'permission granted' : `permission denied${r.message ? `: ${r.message}` : ''}`);
    case 'turn': {
      const ok = r.outcome && r.outcome.ok;
      const spent = cost(Number(r.costUsd) || 0);
      return line(
        ok ? 'turn' : 'turn-error',
        ok ? 'turn ended' : `turn failed${r.outcome?.message ? `: ${r.outcome.message}` : ''}`,
        spent ? ` · ${spent}` : '',
      );
    }
    case 'waiting':
      return r.reason === 'stalled'
        ? line('waiting', 'silent with no tool running (still thinking, or stuck)')
        : line('waiting', `waiting for input (${String(r.reason)})`);
    case 'status':
      return line(
        `status status-${String(r.status)}`,
        `status: ${String(r.status)}`,
        r.error ? ` — ${r.error}` : '',
        r.endReason ? ` (${r.endReason})` : '',
      );
    case 'warning':
      return line('warning', `warning: ${String(r.message ?? '')}`);
    case 'exited':
      return r.error || (r.code !== 0 && r.code !== null)
        ? line('meta', `process exited${r.code !== null ? ` with code ${r.code}` : ''}${r.error ? `: ${r.error}` : ''}`)
        : null;
    default:
      return null;
  }
}
