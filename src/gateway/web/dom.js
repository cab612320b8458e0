// DOM helpers. Text from models and agents only ever reaches the page as text nodes (textContent), never as HTML.

/**
 * Builds an element: `el('li', { class: 'msg', data: { pos: 3 } }, 'text', child)`. Strings become text nodes.
 * @param {string} tag
 * @param {Record<string, unknown>} [props]
 * @param {...(Node|string|null|undefined|false)} children
 * @returns {HTMLElement}
 */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') node.className = String(value);
    else if (key === 'data') for (const [k, v] of Object.entries(value)) node.dataset[k] = String(v);
    else if (key === 'on') for (const [k, v] of Object.entries(value)) node.addEventListener(k, v);
    else if (key === 'text') node.textContent = String(value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  append(node, ...children);
  return node;
}

/** Appends children (strings as text nodes, falsy values skipped). */
export function append(node, ...children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    node.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return node;
}

/** Removes every child of a node. */
export function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
}

/** @returns {HTMLElement} the element with this id (throws when the page lacks it). */
export function byId(id) {
  const node = document.getElementById(id);
  if (!node) throw new Error(`page element #${id} is missing`);
  return node;
}

/** True when a scrollable list is (nearly) scrolled to its end. */
export function atBottom(node) {
  return node.scrollHeight - node.scrollTop - node.clientHeight < 48;
}

/** Scrolls a list to its end. */
export function toBottom(node) {
  node.scrollTop = node.scrollHeight;
}

/** A random id of 32 hex digits (works on plain-http pages, where crypto.randomUUID is missing). */
export function randomId() {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** "14:05" for a timestamp today, else "3 Jan 14:05". */
export function clockTime(ms) {
  const d = new Date(ms);
  const time = d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  return d.toDateString() === new Date().toDateString()
    ? time
    : `${d.toLocaleDateString([], { day: 'numeric', month: 'short' })} ${time}`;
}

/** "42s", "3m 10s", "2h 05m". */
export function duration(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}

/** "$0.0123" (empty for zero). */
export function cost(usd) {
  return usd > 0 ? `$${usd.toFixed(usd < 1 ? 4 : 2)}` : '';
}
