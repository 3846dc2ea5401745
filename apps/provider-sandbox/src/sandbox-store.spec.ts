import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Charge } from './sandbox-objects';
import { SandboxStore } from './sandbox-store';

const aCharge = (id: string, reference = `ref-${id}`): Charge => ({
  id,
  reference,
  amount: 1000,
  currency: 'EUR',
  paymentMethod: 'pm_card_visa',
  status: 'succeeded',
  failureCode: null,
  refundedAmount: 0,
  refunds: [],
  metadata: { companyId: 'c1', paymentId: `p-${id}` },
  payoutId: null,
  createdAt: new Date().toISOString(),
});

describe('SandboxStore', () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'provider-sandbox-store-'));
  });
  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('keeps every commit across a reopen, updates included, and compacts the log', async () => {
    const store = await SandboxStore.open(dataDir);
    await store.commit(() => ({ ops: [{ op: 'charge', charge: aCharge('ch_1') }], result: undefined }));
    await store.commit(() => ({
      ops: [{ op: 'charge', charge: aCharge('ch_2', 'shared') }],
      result: undefined,
    }));
    await store.commit(() => ({
      ops: [{ op: 'charge', charge: aCharge('ch_3', 'shared') }],
      result: undefined,
    }));
    await store.commit(() => ({
      ops: [{ op: 'charge', charge: { ...aCharge('ch_1'), refundedAmount: 300 } }],
      result: undefined,
    }));
    await store.commit(() => ({ ops: [{ op: 'drop', chargeId: 'ch_2' }], result: undefined }));
    await store.close();

    const reopened = await SandboxStore.open(dataDir);
    const { charges, chargeIdsByReference } = reopened.state;
    expect([...charges.keys()]).toEqual(['ch_1', 'ch_2', 'ch_3']);
    expect(charges.get('ch_1')!.charge.refundedAmount).toBe(300);
    expect(charges.get('ch_2')!.dropped).toBe(true);
    expect(chargeIdsByReference.get('shared')).toEqual(['ch_2', 'ch_3']);
    await reopened.close();
    // Compacted: one line per object, the update folded in.
    expect((await readFile(join(dataDir, 'state.jsonl'), 'utf8')).trim().split('\n')).toHaveLength(3);
  });

  it('ignores a torn last line (a crash during its write) and refuses a damaged line before it', async () => {
    const store = await SandboxStore.open(dataDir);
    await store.commit(() => ({ ops: [{ op: 'charge', charge: aCharge('ch_1') }], result: undefined }));
    await store.close();
    const log = join(dataDir, 'state.jsonl');
    await appendFile(log, '{"at":"2026-01-01T00:00:00.000Z","ops":[{"op":"charge","charge":{"id":"ch_torn"');

    const recovered = await SandboxStore.open(dataDir);
    expect([...recovered.state.charges.keys()]).toEqual(['ch_1']);
    await recovered.close();

    await writeFile(log, `not json\n${await readFile(log, 'utf8')}`);
    await expect(SandboxStore.open(dataDir)).rejects.toThrow('line 1 cannot be read');
  });

  it('runs commits one at a time, each deciding on what the previous ones committed', async () => {
    const store = await SandboxStore.open(dataDir);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        store.commit((state) => ({
          ops: [{ op: 'charge', charge: aCharge(`ch_${index}`) }],
          result: state.charges.size,
        })),
      ),
    );
    expect(results).toEqual(Array.from({ length: 20 }, (_, index) => index));
    await store.close();
  });

  it('writes nothing when a decision throws, and goes on with the next commit', async () => {
    const store = await SandboxStore.open(dataDir);
    await expect(
      store.commit(() => {
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    await store.commit(() => ({ ops: [{ op: 'charge', charge: aCharge('ch_1') }], result: undefined }));
    expect(store.state.charges.size).toBe(1);
    await store.close();
  });

  it('forgets everything on reset, durably, and counts the generation', async () => {
    const store = await SandboxStore.open(dataDir);
    await store.commit(() => ({ ops: [{ op: 'charge', charge: aCharge('ch_1') }], result: undefined }));
    await store.reset();
    expect(store.generation).toBe(1);
    expect(store.state.charges.size).toBe(0);
    await store.commit(() => ({ ops: [{ op: 'charge', charge: aCharge('ch_2') }], result: undefined }));
    await store.close();
    const reopened = await SandboxStore.open(dataDir);
    expect([...reopened.state.charges.keys()]).toEqual(['ch_2']);
    await reopened.close();
  });
});
