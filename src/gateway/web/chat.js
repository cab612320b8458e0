// The chat with the orchestrator: the transcript streamed from the daemon (with resume), and the composer. A daemon
// message may carry rows of buttons (an approval's Allow · Deny …): pressing one sends its command as a chat message
// marked pressed, and the message's buttons stay disabled until the daemon edits the message (a new version of it).
import { ApiError, postChatMessage } from './api.js';
import { append, atBottom, byId, clear, clockTime, el, randomId, toBottom } from './dom.js';

const STATE_TEXT = { pending: 'sending…', failed: 'not delivered', accepted: '', sent: '' };

/**
 * Starts the chat view.
 * @param {{ chatId: string, info: { maxMessageLength: number, commands: { name: string, usage: string, summary: string }[] }, onConnection: (state: string) => void }} options
 */
export function startChat({ chatId, info, onConnection }) {
  const list = byId('messages');
  const form = /** @type {HTMLFormElement} */ (byId('chat-form'));
  const input = /** @type {HTMLTextAreaElement} */ (byId('chat-input'));
  const hints = byId('command-hints');
  /** Rows by transcript position: the newest version seen and its element. */
  const rows = new Map();
  /** Messages typed here that the transcript has not shown yet, by client id. */
  const local = new Map();
  /** Client ids of messages that are button presses (a retry sends them pressed again). */
  const presses = new Set();

  input.maxLength = info.maxMessageLength;

  function placeRow(pos, node) {
    const known = rows.get(pos);
    if (known) {
      known.node.replaceWith(node);
      return;
    }
    // Rows arrive in version order; keep them in transcript order (pos). New rows nearly always go last.
    let before = null;
    for (let child = list.lastElementChild; child; child = child.previousElementSibling) {
      const childPos = Number(child.dataset.pos);
      if (!Number.isFinite(childPos) || childPos > pos) before = child;
      else break;
    }
    list.insertBefore(node, before);
  }

  /** The rows of buttons under a daemon message (null when it has none). */
  function renderButtons(m) {
    const lines = Array.isArray(m.buttons) ? m.buttons.filter((line) => Array.isArray(line) && line.length > 0) : [];
    if (m.role !== 'agent' || lines.length === 0) return null;
    const box = el('div', { class: 'msg-buttons', role: 'group', 'aria-label': 'Choices' });
    const press = (command) => {
      const known = rows.get(m.pos);
      if (!known || known.version !== m.version) return;
      setDisabled(box, true);
      void send(command, randomId(), true).then((ok) => {
        // Sent: the buttons wait for the daemon's edit. Not sent: they can be pressed again, if still shown.
        const current = rows.get(m.pos);
        if (!ok && current && current.version === m.version) setDisabled(box, false);
      });
    };
    for (const line of lines) {
      append(
        box,
        el(
          'div',
          { class: 'msg-button-row' },
          ...line.map((b) =>
            el('button', {
              type: 'button',
              class: 'choice',
              text: String(b.label),
              title: String(b.command),
              on: { click: () => press(String(b.command)) },
            }),
          ),
        ),
      );
    }
    return box;
  }

  function renderMessage(m, retry) {
    const state = STATE_TEXT[m.status] ?? '';
    return el(
      'li',
      { class: `msg msg-${m.role} msg-${m.status}`, data: m.pos ? { pos: m.pos } : { client: m.clientId } },
      el('div', { class: 'bubble' }, el('p', { class: 'text', text: m.text }), renderButtons(m)),
      el(
        'div',
        { class: 'meta' },
        el('time', { datetime: new Date(m.createdAt).toISOString(), text: clockTime(m.createdAt) }),
        state ? el('span', { class: 'state', text: state }) : null,
        m.error ? el('span', { class: 'state-error', text: m.error }) : null,
        retry ? el('button', { type: 'button', class: 'link retry', text: 'Retry', on: { click: retry } }) : null,
      ),
    );
  }

  /** Shows one transcript row (from the stream or a POST answer), unless a newer version of it is already shown. */
  function upsert(m) {
    const known = rows.get(m.pos);
    if (known && known.version >= m.version) return;
    const follow = atBottom(list);
    if (m.clientId && local.has(m.clientId)) {
      local.get(m.clientId).node.remove();
      local.delete(m.clientId);
    }
    const retry =
      m.role === 'user' && m.status === 'failed' ? () => send(m.text, m.clientId, presses.has(m.clientId)) : null;
    const node = renderMessage(m, retry);
    placeRow(m.pos, node);
    rows.set(m.pos, { version: m.version, node, clientId: m.clientId });
    if (follow || m.role === 'user') toBottom(list);
  }

  function showLocal(clientId, text, status, error) {
    const existing = local.get(clientId);
    const m = {
      pos: 0,
      role: 'user',
      text,
      status,
      clientId,
      error,
      createdAt: existing ? existing.createdAt : Date.now(),
    };
    const node = renderMessage(m, status === 'failed' ? () => send(text, clientId, presses.has(clientId)) : null);
    if (existing) existing.node.replaceWith(node);
    else list.append(node);
    local.set(clientId, { node, createdAt: m.createdAt });
    toBottom(list);
  }

  /** Sends a message (`pressed`: a button's command); resolves true once the daemon accepted it. */
  async function send(text, clientId = randomId(), pressed = false) {
    if (pressed) presses.add(clientId);
    if (!transcriptHas(clientId)) showLocal(clientId, text, 'pending', null);
    try {
      const answer = await postChatMessage(chatId, clientId, text, pressed);
      upsert(answer.message);
      return true;
    } catch (error) {
      const message = error instanceof ApiError ? error.message : String(error);
      // A message the daemon recorded shows its failed state from the stream; one it never got stays here to retry.
      if (!transcriptHas(clientId)) showLocal(clientId, text, 'failed', message);
      return false;
    }
  }

  function transcriptHas(clientId) {
    for (const row of rows.values()) if (row.clientId === clientId) return true;
    return false;
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = input.value;
    if (!text.trim()) return;
    input.value = '';
    renderHints();
    void send(text);
  });
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });

  function renderHints() {
    const value = input.value;
    clear(hints);
    const m = /^\/(\w*)$/.exec(value.trim());
    const matches = m ? info.commands.filter((c) => c.name.startsWith(m[1].toLowerCase())) : [];
    hints.hidden = matches.length === 0;
    for (const c of matches.slice(0, 8)) {
      append(
        hints,
        el(
          'li',
          {},
          el(
            'button',
            {
              type: 'button',
              class: 'hint',
              on: {
                click: () => {
                  input.value = `/${c.name} `;
                  renderHints();
                  input.focus();
                },
              },
            },
            el('code', { text: c.usage }),
            el('span', { class: 'muted', text: ` — ${c.summary}` }),
          ),
        ),
      );
    }
  }
  input.addEventListener('input', renderHints);

  const stream = new EventSource(`/web/api/chats/${encodeURIComponent(chatId)}/events`);
  stream.addEventListener('message', (event) => upsert(JSON.parse(event.data)));
  stream.addEventListener('open', () => onConnection('connected'));
  stream.addEventListener('error', () =>
    onConnection(stream.readyState === EventSource.CLOSED ? 'disconnected: reload the page' : 'reconnecting…'),
  );
}

/** Disables (or enables) every button in a node. */
function setDisabled(node, disabled) {
  for (const button of node.querySelectorAll('button')) button.disabled = disabled;
}
