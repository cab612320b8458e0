// Boots the page: the browser's chat id, the tabs (one view at a time on a narrow screen), the chat and the sessions.
import { getInfo } from './api.js';
import { startApprovalRules } from './approval-rules.js';
import { startChat } from './chat.js';
import { byId, randomId } from './dom.js';
import { startSessions } from './sessions.js';

const CHAT_KEY = 'switchboard.chatId';
const WIDE = window.matchMedia('(min-width: 900px)');

/** This browser's chat id: generated once and kept in localStorage (a fresh one per visit if storage is off). */
function chatId() {
  try {
    const known = localStorage.getItem(CHAT_KEY);
    if (known && /^[A-Za-z0-9_-]{8,64}$/.test(known)) return known;
    const id = randomId();
    localStorage.setItem(CHAT_KEY, id);
    return id;
  } catch {
    return randomId();
  }
}

function setTab(name) {
  for (const tab of ['chat', 'sessions']) {
    const selected = tab === name;
    byId(`tab-${tab}`).setAttribute('aria-selected', String(selected));
    byId(tab).classList.toggle('active', selected);
  }
  document.body.dataset.tab = name;
}

async function boot() {
  const conn = byId('conn');
  const onConnection = (state) => {
    conn.textContent = state;
    conn.dataset.state = state === 'connected' ? 'ok' : 'bad';
  };
  let info;
  try {
    info = await getInfo();
  } catch (error) {
    onConnection(error instanceof Error ? error.message : String(error));
    return;
  }
  setTab(location.hash.startsWith('#session=') ? 'sessions' : 'chat');
  byId('tab-chat').addEventListener('click', () => setTab('chat'));
  byId('tab-sessions').addEventListener('click', () => setTab('sessions'));

  startChat({ chatId: chatId(), info, onConnection });
  const sessions = startSessions({
    info,
    isVisible: () => WIDE.matches || document.body.dataset.tab === 'sessions',
    onSelect: (id) => history.replaceState(null, '', id ? `#session=${encodeURIComponent(id)}` : location.pathname),
  });
  startApprovalRules();
  const m = /^#session=(.+)$/.exec(location.hash);
  if (m) sessions.select(decodeURIComponent(m[1]));
}

void boot();
