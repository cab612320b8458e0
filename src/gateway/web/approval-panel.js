// The pending approval of the selected coding session: what the agent asks (summary, tool, input) with the buttons
// Allow · Allow for session · Always · Deny (with an optional reason), or, for a question, its options; each decides
// through the RPC method approvals.decide. Once decided (here, or elsewhere: the session's stream says so) the
// outcome replaces the buttons ("allowed for session by telegram|42").
import { ApiError } from './api.js';
import { append, clear, el } from './dom.js';

const SCOPE_TEXT = { once: 'allowed once', session: 'allowed for session', always: 'allowed always' };

/** "allowed for session by telegram|42", "denied by web: not now", "expired (timeout)". */
export function approvalOutcome(a) {
  const by = a.decidedBy ? ` by ${a.decidedBy}` : '';
  switch (a.status) {
    case 'allowed':
      return `${SCOPE_TEXT[a.scope] ?? 'allowed'}${by}${a.kind === 'question' && a.message ? `: ${a.message}` : ''}`;
    case 'denied':
      return `denied${by}${a.message ? `: ${a.message}` : ''}`;
    case 'expired':
      return `expired${a.message ? `: ${a.message}` : ''}`;
    case 'cancelled':
      return `cancelled${by}${a.message ? `: ${a.message}` : ''}`;
    default:
      return String(a.status);
  }
}

/** Pretty JSON of a tool's input, for the detail under the summary. */
function inputText(input) {
  try {
    return JSON.stringify(input, null, 2) ?? '';
  } catch {
    return String(input);
  }
}

/**
 * Builds the panel in `node` (hidden while there is nothing to show).
 * @param {HTMLElement} node
 * @param {{ decide: (params: Record<string, unknown>) => Promise<{ outcome: string, approval: any }> }} deps
 */
export function approvalPanel(node, { decide }) {
  /** The approval shown (pending or decided). */
  let current = null;
  /** Ids known to be decided: a stale `pendingApproval` of a session summary never brings one back. */
  const decided = new Set();
  /** True while this page's decision is on its way. */
  let busy = false;
  /** Grows on every reset: a decision answered after another session was selected is not shown. */
  let generation = 0;

  function render(note = '') {
    clear(node);
    node.hidden = current === null;
    if (!current) return;
    const a = current;
    const pending = a.status === 'pending';
    node.className = `approval${pending ? ' approval-pending' : ' approval-decided'}`;
    node.dataset.id = a.id;
    append(
      node,
      el(
        'p',
        { class: 'approval-head' },
        el('span', { class: 'tag', text: a.kind === 'question' ? 'question' : 'approval' }),
        ' ',
        el('strong', { class: 'approval-summary', text: String(a.summary ?? a.tool) }),
      ),
    );
    if (a.kind === 'question') for (const q of a.questions ?? []) append(node, renderQuestion(q, pending));
    else {
      append(
        node,
        el(
          'details',
          { class: 'approval-input' },
          el('summary', { text: `${a.tool} input` }),
          el('pre', { class: 'pre', text: inputText(a.input) }),
        ),
      );
    }
    if (pending) append(node, a.kind === 'question' ? questionActions(a) : toolActions(a));
    else append(node, el('p', { class: 'approval-outcome', role: 'status', text: approvalOutcome(a) }));
    if (note) append(node, el('p', { class: 'error', role: 'alert', text: note }));
  }

  /** Chosen labels per question (index → labels). */
  let chosen = new Map();

  function renderQuestion(q, pending) {
    const index = (current?.questions ?? []).indexOf(q);
    const single = (current?.questions ?? []).length === 1 && !q.multiSelect;
    const picked = chosen.get(index) ?? [];
    return el(
      'div',
      { class: 'approval-question' },
      el('p', { text: `${q.header ? `${q.header}: ` : ''}${q.question}` }),
      pending
        ? el(
            'div',
            { class: 'approval-actions', role: 'group', 'aria-label': q.question },
            ...q.options.map((label) =>
              el('button', {
                type: 'button',
                class: 'choice',
                text: label,
                'aria-pressed': single ? null : String(picked.includes(label)),
                disabled: busy,
                on: { click: () => (single ? send({ decision: 'allow', answers: [label] }) : toggle(index, q, label)) },
              }),
            ),
          )
        : null,
    );
  }

  function toggle(index, q, label) {
    const picked = chosen.get(index) ?? [];
    const next = q.multiSelect
      ? picked.includes(label)
        ? picked.filter((l) => l !== label)
        : [...picked, label]
      : [label];
    chosen.set(index, next);
    render();
  }

  function questionActions(a) {
    const questions = a.questions ?? [];
    const single = questions.length === 1 && !questions[0].multiSelect;
    const complete = questions.every((_, i) => (chosen.get(i) ?? []).length > 0);
    return el(
      'div',
      { class: 'approval-actions' },
      single
        ? null
        : el('button', {
            type: 'button',
            class: 'primary',
            text: 'Answer',
            disabled: busy || !complete,
            on: {
              click: () =>
                send({ decision: 'allow', answers: questions.map((_, i) => (chosen.get(i) ?? []).join(', ')) }),
            },
          }),
      denyControls(),
    );
  }

  function toolActions() {
    const button = (label, decision, primary) =>
      el('button', {
        type: 'button',
        class: primary ? 'primary' : 'choice',
        text: label,
        disabled: busy,
        on: { click: () => send({ decision }) },
      });
    return el(
      'div',
      { class: 'approval-actions' },
      button('Allow', 'allow', true),
      button('Allow for session', 'allow-session', false),
      button('Always', 'always', false),
      denyControls(),
    );
  }

  function denyControls() {
    const reason = el('input', {
      type: 'text',
      class: 'approval-reason',
      placeholder: 'reason (optional)',
      'aria-label': 'Reason for denying',
      maxlength: 2000,
      disabled: busy,
    });
    const deny = el('button', {
      type: 'button',
      class: 'choice deny',
      text: 'Deny',
      disabled: busy,
      on: {
        click: () => {
          const message = /** @type {HTMLInputElement} */ (reason).value.trim();
          void send(message ? { decision: 'deny', message } : { decision: 'deny' });
        },
      },
    });
    return el('span', { class: 'approval-deny' }, reason, deny);
  }

  async function send(params) {
    if (!current || busy) return;
    const id = current.id;
    const asked = generation;
    busy = true;
    render();
    let note = '';
    try {
      const result = await decide({ id, ...params });
      if (asked !== generation) return;
      if (result && result.approval) update(result.approval);
    } catch (e) {
      note = e instanceof ApiError ? e.message : String(e);
    } finally {
      if (asked === generation) {
        busy = false;
        render(note);
      }
    }
  }

  /** Shows an approval as the daemon last described it (a log record, a decide answer, or a summary's pending one). */
  function update(a) {
    if (!a || typeof a.id !== 'string') return;
    // Nothing new (a summary refreshed): keep the panel as it is, with what is typed in it.
    if (current && current.id === a.id && current.status === a.status) return;
    if (a.status === 'pending') {
      if (decided.has(a.id)) return;
      if (current?.id !== a.id) chosen = new Map();
      current = a;
    } else {
      decided.add(a.id);
      // A newer pending request stays in front of an older one's outcome.
      if (current && current.id !== a.id && current.status === 'pending') return;
      current = a;
    }
    render();
  }

  return {
    update,
    /** Forgets everything (another session was selected). */
    reset() {
      generation += 1;
      current = null;
      chosen = new Map();
      decided.clear();
      busy = false;
      render();
    },
    /** The id of the pending approval shown, if any. */
    pendingId: () => (current && current.status === 'pending' ? current.id : null),
  };
}
