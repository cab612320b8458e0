// A session's Changes view: what the session changed in its working directory against the commit it started from
// (sessions.diff over /rpc): the files with their +/- counts, and the patch rendered by diff2html (served from the
// daemon as /web/assets/diff2html.js and .css, loaded the first time the view opens), side by side or unified.
// File names reach the page only as text nodes; the patch only through diff2html, which escapes what it renders.
import { ApiError } from './api.js';
import { append, byId, clear, el } from './dom.js';

const FORMAT_KEY = 'switchboard.diffFormat';
const STATUS_MARK = { added: 'A', modified: 'M', deleted: 'D', renamed: 'R' };

/** @type {Promise<any> | null} */
let library = null;

/** Loads diff2html's stylesheet and browser bundle once; resolves with `window.Diff2Html`. */
function loadDiff2Html() {
  if (library) return library;
  library = new Promise((resolve, reject) => {
    document.head.append(el('link', { rel: 'stylesheet', href: '/web/assets/diff2html.css' }));
    const script = el('script', { src: '/web/assets/diff2html.js' });
    script.addEventListener('load', () => {
      const found = /** @type {any} */ (window).Diff2Html;
      if (found && typeof found.html === 'function') resolve(found);
      else reject(new Error('the diff renderer did not load'));
    });
    script.addEventListener('error', () => reject(new Error('the diff renderer could not be loaded')));
    document.head.append(script);
  });
  library.catch(() => {
    library = null; // try again the next time the view opens
  });
  return library;
}

function savedFormat() {
  try {
    const known = localStorage.getItem(FORMAT_KEY);
    if (known === 'side-by-side' || known === 'line-by-line') return known;
  } catch {
    // storage off: the default below
  }
  return window.matchMedia('(min-width: 1100px)').matches ? 'side-by-side' : 'line-by-line';
}

/**
 * The Changes view of the session detail.
 * @param {{ rpc: (method: string, params: Record<string, unknown>) => Promise<any> }} deps
 */
export function changesView({ rpc }) {
  const section = byId('session-changes');
  const summary = byId('changes-summary');
  const notes = byId('changes-notes');
  const files = byId('changes-files');
  const diff = byId('changes-diff');
  const formatButton = byId('changes-format');
  let format = savedFormat();
  /** @type {string | null} */
  let session = null;
  /** The last answer for `session` (re-rendered when the format changes). */
  let result = null;
  /** Count loads and renders: an answer for a session no longer shown, or a superseded render, is dropped. */
  let loads = 0;
  let renders = 0;

  function showFormat() {
    formatButton.setAttribute('aria-pressed', String(format === 'side-by-side'));
    formatButton.textContent = format === 'side-by-side' ? 'Side by side' : 'Unified';
    formatButton.title = format === 'side-by-side' ? 'Show as one column' : 'Show old and new side by side';
  }

  /** One file of the list; its link scrolls to the file's block (the patch lists files in the same order). */
  function fileRow(file, index) {
    const counts = file.binary
      ? [el('span', { class: 'muted', text: 'binary' })]
      : [
          el('span', { class: 'plus', text: `+${file.additions}` }),
          el('span', { class: 'minus', text: `-${file.deletions}` }),
        ];
    const name = file.from !== undefined ? `${file.from} → ${file.path}` : file.path;
    const link = el('a', {
      href: '#',
      text: name,
      on: {
        click: (event) => {
          event.preventDefault();
          diff.querySelectorAll('.d2h-file-wrapper')[index]?.scrollIntoView({ block: 'start' });
        },
      },
    });
    return el(
      'li',
      { class: 'changes-file', data: { path: file.path, status: file.status } },
      el('span', { class: 'status', text: STATUS_MARK[file.status] ?? '?', title: file.status }),
      el('span', { class: 'path' }, link),
      ...counts,
    );
  }

  async function render() {
    if (!result) return;
    const { totals } = result;
    const since = `${String(result.base).slice(0, 12)}${result.baseFrom === 'head' ? ' (HEAD)' : ''}`;
    summary.textContent =
      totals.files === 0
        ? `No changes since ${since}`
        : `${totals.files} file${totals.files === 1 ? '' : 's'} changed, +${totals.additions} -${totals.deletions} since ${since}`;
    clear(notes);
    for (const note of result.notes ?? []) append(notes, el('li', { text: note }));
    clear(files);
    result.files.forEach((file, index) => append(files, fileRow(file, index)));
    clear(diff);
    if (!result.patch) return;
    renders += 1;
    const mine = renders;
    const Diff2Html = await loadDiff2Html();
    if (mine !== renders || !result) return;
    // diff2html escapes every line and file name it renders; its output is the only HTML the page inserts.
    diff.innerHTML = Diff2Html.html(result.patch, {
      outputFormat: format,
      drawFileList: false,
      matching: 'lines',
      colorScheme: 'auto',
    });
  }

  async function load() {
    if (!session) return;
    loads += 1;
    const mine = loads;
    summary.textContent = 'Loading changes…';
    clear(notes);
    try {
      const answer = await rpc('sessions.diff', { session });
      if (mine !== loads) return;
      result = answer;
      await render();
    } catch (e) {
      if (mine !== loads) return;
      result = null;
      clear(files);
      clear(diff);
      summary.textContent = e instanceof ApiError || e instanceof Error ? e.message : String(e);
    }
  }

  formatButton.addEventListener('click', () => {
    format = format === 'side-by-side' ? 'line-by-line' : 'side-by-side';
    try {
      localStorage.setItem(FORMAT_KEY, format);
    } catch {
      // storage off: the choice lasts for this page
    }
    showFormat();
    void render().catch((e) => {
      summary.textContent = e instanceof Error ? e.message : String(e);
    });
  });
  byId('changes-refresh').addEventListener('click', () => void load());
  showFormat();

  return {
    /** Shows the view for `id`, asking the daemon for its changes. */
    show(id) {
      session = id;
      section.hidden = false;
      void load();
    },
    /** Hides the view (the session's output is shown instead). */
    hide() {
      section.hidden = true;
    },
    /** Forgets what was shown (another session was selected). */
    reset() {
      loads += 1;
      renders += 1;
      session = null;
      result = null;
      summary.textContent = '';
      clear(notes);
      clear(files);
      clear(diff);
    },
  };
}
