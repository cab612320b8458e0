// The coding sessions: the list (sessions.list over /rpc, newest first, a page at a time: the first page is refreshed,
// "Show older sessions" asks for the next page), and for the selected session its log streamed
// live from GET /sessions/:id/events, with a box to send it a message (sessions.send) and, when the agent asks for a tool
// or has a question, the pending approval to decide (approval-panel.js). Its Changes tab shows what the session changed
// in its working directory (changes.js).
import { ApiError, rpc } from './api.js';
import { approvalPanel } from './approval-panel.js';
import { changesView } from './changes.js';
import { append, atBottom, byId, clear, cost, duration, el, toBottom } from './dom.js';
import { RECORD_TYPES, renderRecord } from './session-log.js';

const MAX_LOG_LINES = 3000;
const TERMINAL = new Set(['completed', 'failed', 'killed', 'interrupted']);
const PAGE_SIZE = 50;

/**
 * Starts the sessions view.
 * @param {{ info: { sessionsRefreshMs: number }, isVisible: () => boolean, onSelect: (id: string | null) => void }} options
 */
export function startSessions({ info, isVisible, onSelect }) {
  const panel = byId('sessions');
  const list = byId('session-list');
  const note = byId('sessions-note');
  const detail = byId('session-detail');
  const log = byId('session-log');
  const form = /** @type {HTMLFormElement} */ (byId('session-form'));
  const input = /** @type {HTMLTextAreaElement} */ (byId('session-input'));
  const error = byId('session-error');
  const approval = approvalPanel(byId('session-approval'), { decide: (params) => rpc('approvals.decide', params) });
  const changes = changesView({ rpc });
  /** @type {Map<string, any>} */
  let summaries = new Map();
  let selected = null;
  /** @type {EventSource | null} */
  let stream = null;
  /** What the selected session's event stream says now; `waitingFor` is undefined until the stream tells. */
  let live = { status: '', costUsd: 0, waitingFor: undefined };
  let refreshing = false;
  /** The cursor of the page after the last one shown (null: every session is shown). */
  let olderCursor = null;
  /** True once the person asked for older pages: a refresh then keeps them below the first page. */
  let showsOlder = false;

  /** The status pill; a running session that waits for input says so (and why), since that is when it needs you. */
  function badge(node, status, waitingFor) {
    const waiting = status === 'running' && waitingFor;
    node.className = `badge badge-${waiting ? 'waiting' : status}`;
    node.textContent = waiting
      ? waitingFor === 'question' || waitingFor === 'permission'
        ? `asks (${waitingFor})`
        : waitingFor === 'stalled'
          ? 'silent'
          : 'waiting'
      : status;
  }

  function renderList() {
    clear(list);
    // The Sessions tab counts the sessions waiting for an approval (seen on a phone while the chat is shown).
    const asking = [...summaries.values()].filter((s) => s.pendingApproval && !TERMINAL.has(s.status)).length;
    const tab = byId('tab-sessions');
    tab.dataset.pending = String(asking);
    tab.title = asking > 0 ? `${asking} waiting for approval` : '';
    if (summaries.size === 0) {
      append(
        list,
        el('li', {
          class: 'muted empty',
          text: 'No coding sessions yet. Ask the orchestrator, or type /claude <task> in the chat.',
        }),
      );
      return;
    }
    for (const s of summaries.values()) {
      const status = el('span');
      badge(status, s.status, s.waitingFor);
      const item = el(
        'li',
        {},
        el(
          'button',
          {
            type: 'button',
            class: `session-row${s.id === selected ? ' selected' : ''}`,
            data: { id: s.id },
            'aria-current': s.id === selected ? 'true' : null,
            on: { click: () => select(s.id) },
          },
          el('span', { class: 'session-name', text: s.name }),
          status,
          el('span', {
            class: 'session-facts muted',
            text: [s.harness, s.node ? `on ${s.node}` : null, duration(s.durationMs), cost(s.costUsd)]
              .filter(Boolean)
              .join(' · '),
          }),
        ),
      );
      append(list, item);
    }
    if (olderCursor) {
      const more = el('button', {
        type: 'button',
        class: 'link',
        text: 'Show older sessions',
        on: { click: () => void loadOlder() },
      });
      append(list, el('li', { class: 'more' }, more));
    }
  }

  async function loadOlder() {
    if (!olderCursor) return;
    try {
      const result = await rpc('sessions.list', { status: 'all', limit: PAGE_SIZE, cursor: olderCursor });
      for (const s of result.sessions) if (!summaries.has(s.id)) summaries.set(s.id, s);
      olderCursor = result.nextCursor;
      showsOlder = true;
      note.textContent = '';
      renderList();
    } catch (e) {
      note.textContent = e instanceof ApiError ? e.message : String(e);
    }
  }

  function renderHeader() {
    const s = summaries.get(selected);
    if (!s) return;
    byId('detail-name').textContent = s.name;
    const status = live.status || s.status;
    badge(byId('detail-status'), status, live.waitingFor === undefined ? s.waitingFor : live.waitingFor);
    const spent = cost(Math.max(live.costUsd, s.costUsd));
    const node = s.node ? `on ${s.node}` : null;
    byId('detail-meta').textContent = [s.harness, node, s.model, duration(s.durationMs), spent, s.workdir]
      .filter(Boolean)
      .join(' · ');
    form.hidden = TERMINAL.has(status);
  }

  async function refresh() {
    if (refreshing) return;
    refreshing = true;
    try {
      const result = await rpc('sessions.list', { status: 'all', limit: PAGE_SIZE });
      const first = new Map(result.sessions.map((s) => [s.id, s]));
      // Older pages already shown stay below the refreshed first page.
      if (showsOlder) {
        for (const [id, s] of summaries) if (!first.has(id)) first.set(id, s);
      } else {
        olderCursor = result.nextCursor;
      }
      summaries = first;
      note.textContent = '';
      renderList();
      if (selected) {
        renderHeader();
        const pending = summaries.get(selected)?.pendingApproval;
        if (pending) approval.update(pending);
      }
    } catch (e) {
      note.textContent = e instanceof ApiError ? e.message : String(e);
    } finally {
      refreshing = false;
    }
  }

  function addRecord(record) {
    if (record.type === 'status') live.status = String(record.status);
    if (record.type === 'turn' && typeof record.totalCostUsd === 'number') live.costUsd = record.totalCostUsd;
    if (record.type === 'waiting') live.waitingFor = String(record.reason);
    if (record.type === 'user' || record.type === 'permissionAnswer') live.waitingFor = null;
    if (record.type === 'approval') approval.update(record.approval);
    if (record.type === 'status' || record.type === 'turn' || record.type === 'waiting' || record.type === 'user')
      renderHeader();
    const node = renderRecord(record);
    if (!node) return;
    node.dataset.seq = String(record.seq);
    const follow = atBottom(log);
    log.append(node);
    while (log.childElementCount > MAX_LOG_LINES) log.firstElementChild?.remove();
    if (follow) toBottom(log);
  }

  /** Shows the selected session's output (`log`) or its changes (`changes`). */
  function showView(view) {
    for (const [name, tab] of [
      ['log', byId('detail-tab-log')],
      ['changes', byId('detail-tab-changes')],
    ])
      tab.setAttribute('aria-selected', String(name === view));
    log.hidden = view !== 'log';
    if (view === 'changes' && selected) changes.show(selected);
    else changes.hide();
  }

  function select(id) {
    if (stream) stream.close();
    stream = null;
    selected = id;
    live = { status: '', costUsd: 0, waitingFor: undefined };
    clear(log);
    approval.reset();
    changes.reset();
    showView('log');
    error.hidden = true;
    panel.classList.toggle('has-selection', id !== null);
    detail.hidden = id === null;
    renderList();
    onSelect(id);
    if (id === null) return;
    renderHeader();
    const known = summaries.get(id)?.pendingApproval;
    if (known) approval.update(known);
    stream = new EventSource(`/sessions/${encodeURIComponent(id)}/events`);
    for (const type of RECORD_TYPES) stream.addEventListener(type, (event) => addRecord(JSON.parse(event.data)));
    stream.addEventListener('error', () => {
      if (stream && stream.readyState === EventSource.CLOSED)
        showError('the output stream closed: select the session again or reload');
    });
    if (!summaries.has(id)) void refresh();
  }

  function showError(text) {
    error.textContent = text;
    error.hidden = false;
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const message = input.value;
    if (!message.trim() || !selected) return;
    error.hidden = true;
    const button = form.querySelector('button');
    if (button) button.disabled = true;
    try {
      await rpc('sessions.send', { session: selected, message });
      input.value = '';
    } catch (e) {
      showError(e instanceof ApiError ? e.message : String(e));
    } finally {
      if (button) button.disabled = false;
    }
  });
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  byId('session-back').addEventListener('click', () => select(null));
  byId('detail-tab-log').addEventListener('click', () => showView('log'));
  byId('detail-tab-changes').addEventListener('click', () => showView('changes'));

  void refresh();
  setInterval(() => {
    if (document.visibilityState === 'visible' && isVisible()) void refresh();
  }, info.sessionsRefreshMs);

  return { select, refresh };
}
