// The stored approval rules ("Always" answers, and those of the config): listed when the section is opened
// (approvals.rules over /rpc), each stored one with a Remove button (approvals.removeRule). Config rules are shown,
// not removable: they change in the config file.
import { ApiError, rpc } from './api.js';
import { append, byId, clear, el } from './dom.js';

/** Starts the rules section (`#approval-rules`): it loads each time it is opened. */
export function startApprovalRules() {
  const section = /** @type {HTMLDetailsElement} */ (byId('approval-rules'));
  const list = byId('rule-list');
  const note = byId('rules-note');

  function show(rules) {
    clear(list);
    if (rules.length === 0) {
      append(list, el('li', { class: 'muted', text: 'No rules: every tool asks.' }));
      return;
    }
    for (const r of rules) {
      const removable = r.source !== 'config';
      append(
        list,
        el(
          'li',
          { class: 'rule', data: { id: r.id } },
          el('code', { class: 'rule-text', text: String(r.rule) }),
          el('span', { class: `badge badge-${r.behavior === 'deny' ? 'failed' : 'completed'}`, text: r.behavior }),
          el('span', {
            class: 'muted rule-facts',
            text: [r.root ?? 'every workspace', r.source === 'config' ? 'from config' : `by ${r.source}`].join(' · '),
          }),
          removable
            ? el('button', {
                type: 'button',
                class: 'link rule-remove',
                text: 'Remove',
                on: { click: () => void remove(r.id) },
              })
            : null,
        ),
      );
    }
  }

  async function load() {
    try {
      const result = await rpc('approvals.rules', {});
      note.textContent = '';
      show(Array.isArray(result?.rules) ? result.rules : []);
    } catch (e) {
      note.textContent = e instanceof ApiError ? e.message : String(e);
    }
  }

  async function remove(id) {
    try {
      await rpc('approvals.removeRule', { id });
    } catch (e) {
      note.textContent = e instanceof ApiError ? e.message : String(e);
      return;
    }
    await load();
  }

  section.addEventListener('toggle', () => {
    if (section.open) void load();
  });
  return { load };
}
