import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  linearFixture,
  signLinearWebhook,
  TEST_WEBHOOK_SECRET,
} from '../../../test/support/linear-webhook-fixtures.ts';
import { systemClock } from '../../core/clock.ts';
import { silentLogger } from '../../core/logger.ts';
import type { NewDelivery } from '../../store/linear-delivery-types.ts';
import type { IntakeResult } from './intake.ts';
import { WebhookIntake } from './intake.ts';

/** An intake over a store that records each group commit and lets the test end it. */
function intakeWithGroups(): {
  intake: WebhookIntake;
  groups: number[];
  commit: () => void;
} {
  const groups: number[] = [];
  const ends: (() => void)[] = [];
  const intake = new WebhookIntake({
    secret: TEST_WEBHOOK_SECRET,
    clock: systemClock(),
    logger: silentLogger(),
    store: {
      enqueueMany: (deliveries: readonly NewDelivery[]) => {
        groups.push(deliveries.length);
        return new Promise<boolean[]>((resolve) => ends.push(() => resolve(deliveries.map(() => true))));
      },
    },
  });
  return {
    intake,
    groups,
    commit: () => {
      for (const end of ends.splice(0)) end();
    },
  };
}

/** A new signed delivery, as the route hands it to the intake. */
function receive(intake: WebhookIntake): Promise<IntakeResult> {
  const signed = signLinearWebhook(linearFixture('issue-create'));
  return intake.receive(Buffer.from(signed.body), {
    signature: signed.headers['linear-signature'],
    deliveryId: signed.deliveryId,
  });
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('WebhookIntake group commits', () => {
  it('commits a lone delivery at the next turn of the event loop, and answers it only once committed', async () => {
    const { intake, groups, commit } = intakeWithGroups();
    let answered = false;
    const answer = receive(intake).then((result) => ((answered = true), result));
    await nextTurn();
    assert.deepEqual(groups, [1], 'committed in the first turn after it arrived');
    await nextTurn();
    assert.equal(answered, false, 'not answered before its commit');
    commit();
    assert.equal((await answer).status, 200);
  });

  it('keeps a group open while each turn brings more deliveries, then commits them all at once', async () => {
    const { intake, groups, commit } = intakeWithGroups();
    const answers = [receive(intake), receive(intake)];
    await nextTurn();
    answers.push(receive(intake));
    await nextTurn();
    answers.push(receive(intake));
    for (let i = 0; i < 3; i += 1) await nextTurn();
    assert.deepEqual(groups, [4], 'one commit for the four that arrived over three turns');
    commit();
    assert.deepEqual(
      (await Promise.all(answers)).map((a) => a.status),
      [200, 200, 200, 200],
    );
  });

  it('waits for no more once a group holds 64 deliveries', async () => {
    const { intake, groups, commit } = intakeWithGroups();
    const answers = Array.from({ length: 64 }, () => receive(intake));
    await nextTurn();
    assert.deepEqual(groups, [64], 'committed at the first turn, though it grew');
    const later = receive(intake);
    for (let i = 0; i < 2; i += 1) await nextTurn();
    assert.deepEqual(groups, [64, 1], 'what came after it is a group of its own');
    commit();
    await Promise.all([...answers, later]);
  });
});
