// A scripted stand-in for `codex app-server` (stdio JSON-RPC) for app-server-run.test.ts: it answers initialize,
// thread/start and turn/start, logs every message it receives to $FAKE_LOG (one JSON line each), and plays one script
// per turn, chosen by the turn's text:
//   ASK      asks item/tool/requestUserInput (question q1); the answer it gets back is the turn's agent message
//   TOOLCALL sends item/tool/call, which the harness does not offer; the error it gets back is the agent message
//   RESOLVE  asks a command approval, then says it was resolved (as on an interrupt) and ends the turn
//   CRASH    writes to stderr and exits 3 in the middle of the turn
//   SLOW     ends the turn only when turn/interrupt arrives (status interrupted)
//   else     answers "echo: <text>"
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const log = process.env.FAKE_LOG;
const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
const notify = (method, params) => send({ method, params });
let turns = 0;
/** Server request id → what to do with the client's answer. */
const waiting = new Map();
let slowTurn = null;

function endTurn(turnId, text, status = 'completed') {
  if (text !== undefined) notify('item/completed', { turnId, item: { type: 'agentMessage', id: `m-${turnId}`, text } });
  notify('turn/completed', { threadId: 'th-1', turn: { id: turnId, status, error: null } });
}

function turn(turnId, text) {
  notify('turn/started', { threadId: 'th-1', turn: { id: turnId } });
  if (text.includes('ASK')) {
    waiting.set('q', (m) => endTurn(turnId, JSON.stringify(m.result)));
    const questions = [{ id: 'q1', header: 'Colour', question: 'Which colour?' }];
    send({
      id: 'q',
      method: 'item/tool/requestUserInput',
      params: { threadId: 'th-1', turnId, itemId: 'i', questions },
    });
  } else if (text.includes('TOOLCALL')) {
    waiting.set('x', (m) => endTurn(turnId, `refused: ${m.error?.message}`));
    send({ id: 'x', method: 'item/tool/call', params: { threadId: 'th-1', turnId, tool: 'mine', arguments: {} } });
  } else if (text.includes('RESOLVE')) {
    const params = { threadId: 'th-1', turnId, itemId: 'c', command: 'rm -rf /' };
    send({ id: 5, method: 'item/commandExecution/requestApproval', params });
    notify('serverRequest/resolved', { threadId: 'th-1', requestId: 5 });
    endTurn(turnId, undefined, 'interrupted');
  } else if (text.includes('CRASH')) {
    process.stderr.write('fatal: the fake crashed\n');
    process.exit(3);
  } else if (text.includes('SLOW')) {
    slowTurn = turnId;
  } else {
    endTurn(turnId, `echo: ${text}`);
  }
}

createInterface({ input: process.stdin }).on('line', (line) => {
  if (log) appendFileSync(log, `${line}\n`);
  const message = JSON.parse(line);
  if (message.method === undefined) {
    waiting.get(message.id)?.(message);
    waiting.delete(message.id);
    return;
  }
  switch (message.method) {
    case 'initialize':
      if (process.env.FAKE_INIT_ERROR) return send({ id: message.id, error: { code: -1, message: 'not today' } });
      return send({ id: message.id, result: { userAgent: 'fake' } });
    case 'thread/start':
    case 'thread/resume':
      return send({ id: message.id, result: { thread: { id: 'th-1' }, model: 'fake-model' } });
    case 'turn/start': {
      turns += 1;
      const turnId = `tu-${turns}`;
      send({ id: message.id, result: { turn: { id: turnId } } });
      return turn(turnId, message.params.input[0].text);
    }
    case 'turn/interrupt':
      send({ id: message.id, result: {} });
      if (slowTurn) endTurn(slowTurn, undefined, 'interrupted');
      slowTurn = null;
      return;
    default:
      if (message.id !== undefined) send({ id: message.id, result: {} });
  }
});
