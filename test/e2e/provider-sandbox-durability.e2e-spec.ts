import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Webhook } from 'standardwebhooks';
import {
  aSandboxCharge,
  eventually,
  SandboxHttp,
  sandboxDataDir,
  startTestSandbox,
  stopAllSandboxes,
} from '../support/provider-sandbox';
import { WebhookReceiver } from '../support/webhook-receiver';

jest.setTimeout(60_000);

const ROOT = resolve(__dirname, '../..');

afterAll(stopAllSandboxes);

describe('provider sandbox: durable state', () => {
  it('keeps charges, keys, refunds, payouts, secrets and pending webhooks across a SIGKILL', async () => {
    const dataDir = await sandboxDataDir();
    const before = await startTestSandbox({ dataDir });
    const http = new SandboxHttp(before);
    const params = aSandboxCharge({ metadata: { companyId: 'company-durable', paymentId: 'p1' } });
    const { body: charge } = await http.createCharge(params);
    await http.call('POST', `/v1/charges/${charge.id}/refunds`, {
      body: { amount: 10 },
      idempotencyKey: 'durable-refund',
    });
    const { body: payouts } = await http.call('POST', '/v1/payouts', {
      body: { companyId: 'company-durable' },
    });
    expect((await before.kill('SIGKILL')).signal).toBe('SIGKILL');

    const receiver = await WebhookReceiver.start();
    try {
      const after = await startTestSandbox({ dataDir, webhookUrl: receiver.url() });
      expect(after.apiKey).toBe(before.apiKey);
      expect(after.webhookSecret).toBe(before.webhookSecret);
      const httpAfter = new SandboxHttp(after);
      const stored = (await httpAfter.call('GET', `/v1/charges/${charge.id}`)).body;
      expect(stored).toMatchObject({ id: charge.id, refundedAmount: 10, payoutId: payouts.data[0].id });
      const replay = await httpAfter.createCharge(params);
      expect(replay.body).toEqual(charge);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(await httpAfter.chargesWithReference(params.reference)).toBe(1);
      expect((await httpAfter.call('GET', `/v1/payouts/${payouts.data[0].id}`)).body).toEqual(
        payouts.data[0],
      );
      // The events made before the kill, while no URL was set, are sent now, signed with the kept secret.
      await receiver.waitFor((requests) => requests.length >= 3, 10_000);
      for (const request of receiver.requests)
        new Webhook(after.webhookSecret).verify(request.body, request.headers);
      expect(receiver.requests.map((request) => JSON.parse(request.body).type)).toEqual([
        'charge.succeeded',
        'charge.refunded',
        'payout.paid',
      ]);
      await after.stop();
    } finally {
      await receiver.close();
    }
  });

  it('still holds every charge it answered when SIGKILLed in the middle of a burst', async () => {
    const dataDir = await sandboxDataDir();
    const sandbox = await startTestSandbox({ dataDir });
    const http = new SandboxHttp(sandbox);
    const answered: string[] = [];
    const burst = Array.from({ length: 40 }, async () => {
      const answer = await http.createCharge(aSandboxCharge()).catch(() => undefined);
      if (answer?.status === 201) answered.push(answer.body.id as string);
    });
    await eventually(async () => (answered.length >= 10 ? true : undefined));
    await sandbox.kill('SIGKILL');
    await Promise.all(burst);
    const restarted = new SandboxHttp(await startTestSandbox({ dataDir }));
    for (const id of answered) expect((await restarted.call('GET', `/v1/charges/${id}`)).status).toBe(200);
  });

  it('waits for a live sandbox on the same data dir, then refuses to start', async () => {
    const dataDir = await sandboxDataDir();
    const first = await startTestSandbox({ dataDir });
    await expect(
      startTestSandbox({ dataDir, env: { PROVIDER_SANDBOX_LOCK_WAIT_MS: '300' } }),
    ).rejects.toThrow(`is used by another provider sandbox (pid ${first.pid})`);
    await first.stop();
  });

  it('fails at boot naming a bad PROVIDER_SANDBOX_FAULTS', async () => {
    await expect(startTestSandbox({ faults: 'error=0.1,chaos=1' })).rejects.toThrow(
      'PROVIDER_SANDBOX_FAULTS: unknown fault "chaos"',
    );
  });

  it('stops with the process that started it (startProviderSandbox), SIGKILL included', async () => {
    const dataDir = await sandboxDataDir();
    const script = `require(${JSON.stringify(resolve(ROOT, 'dist/libs/payments/src/index.js'))})
      .startProviderSandbox({ dataDir: ${JSON.stringify(dataDir)} })
      .then((sandbox) => console.log('sandbox pid ' + sandbox.pid), (error) => { console.error(error); process.exit(1); });`;
    const parent = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const pid = await new Promise<number>((resolvePid, reject) => {
      parent.stdout.on('data', (chunk: Buffer) => {
        const match = /sandbox pid (\d+)/.exec(chunk.toString());
        if (match) resolvePid(Number(match[1]));
      });
      parent.once('exit', () => reject(new Error('the parent exited before the sandbox started')));
    });
    // Running, not a zombie (an orphan's reaper may be slow to collect it).
    const alive = (): boolean => {
      try {
        return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
      } catch {
        return false;
      }
    };
    expect(alive()).toBe(true);
    parent.kill('SIGKILL');
    await eventually(async () => (alive() ? undefined : true), 10_000);
    // It stopped cleanly: the data dir is free at once.
    const next = await startTestSandbox({ dataDir, env: { PROVIDER_SANDBOX_LOCK_WAIT_MS: '0' } });
    await next.stop();
  });
});
