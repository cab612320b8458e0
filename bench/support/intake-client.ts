// The client side of the intake benches, run in a worker thread (see IntakeDriver): posts signed deliveries over
// keep-alive HTTP from `parallel` lanes and answers the run's figures. A webhook sender is another machine; in a
// thread of its own the client's HTTP work does not share the event loop (or, on two cores, the core) of the server
// it measures, for the switchboard rows and the bare baselines alike.
import { Agent, request } from 'node:http';
import { parentPort } from 'node:worker_threads';
import type { SignedDelivery } from '../../test/support/linear-webhook-fixtures.ts';

/** One run the main thread asks for. */
export interface DriveRequest {
  id: number;
  port: number;
  path: string;
  deliveries: SignedDelivery[];
  parallel: number;
  maxSockets: number;
}

/** Its answer: every latency in ms and the run's seconds, or why it failed. */
export type DriveAnswer =
  { id: number; ok: true; latencies: number[]; seconds: number } | { id: number; ok: false; error: string };

let agent: Agent | null = null;

function post(port: number, path: string, delivery: SignedDelivery): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent: agent ?? undefined,
        headers: { ...delivery.headers, 'content-length': Buffer.byteLength(delivery.body) },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(delivery.body);
  });
}

async function drive(ask: DriveRequest): Promise<DriveAnswer> {
  agent ??= new Agent({ keepAlive: true, maxSockets: ask.maxSockets });
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  const lane = async (): Promise<void> => {
    while (next < ask.deliveries.length) {
      const delivery = ask.deliveries[next++] as SignedDelivery;
      const t0 = performance.now();
      const { status, text } = await post(ask.port, ask.path, delivery);
      latencies.push(performance.now() - t0);
      if (status !== 200) throw new Error(`${ask.path} answered ${status}: ${text}`);
    }
  };
  try {
    await Promise.all(Array.from({ length: ask.parallel }, lane));
    return { id: ask.id, ok: true, latencies, seconds: (performance.now() - started) / 1000 };
  } catch (error) {
    return { id: ask.id, ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

parentPort?.on('message', (ask: DriveRequest) => {
  void drive(ask).then((answer) => parentPort?.postMessage(answer));
});
