import assert from 'node:assert/strict';
import type { Notices } from '../../src/core/notices.ts';

/** A node's LISTEN connection driven by the test, for `channel` only: `notify` and `reconnect` call its subscribers. */
export function testNotices(channel: string): Notices & { notify(payload: string): void; reconnect(): void } {
  const handlers = new Set<(payload: string) => void>();
  const connects = new Set<() => void>();
  return {
    on(asked, handler) {
      assert.equal(asked, channel);
      handlers.add(handler);
      return () => handlers.delete(handler);
    },
    onConnect(handler) {
      connects.add(handler);
      return () => connects.delete(handler);
    },
    notify: (payload) => handlers.forEach((h) => h(payload)),
    reconnect: () => connects.forEach((h) => h()),
  };
}
