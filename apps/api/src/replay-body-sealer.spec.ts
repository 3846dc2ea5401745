import { SecretBox } from '@ledgerkey/secrets';
import { renderProblem } from './problem-details';
import { replayBodySealer, ReplayUnavailableError } from './replay-body-sealer';

describe('replayBodySealer', () => {
  const body = JSON.stringify({ id: 'e1', secret: 'whsec_' + 'A'.repeat(43) + '=' });
  const box = new SecretBox({ current: Buffer.alloc(32, 1) });
  const sealer = replayBodySealer(box);

  it('stores the answer sealed and replays it byte for byte', () => {
    const stored = sealer.seal(body);
    expect(stored).not.toContain('whsec_');
    expect(sealer.open(stored)).toBe(body);
  });

  it('replays an answer stored in clear before answers were sealed, as stored', () => {
    expect(sealer.open(body)).toBe(body);
  });

  it('answers 410 idempotency_replay_unavailable, not 5xx, when the key that sealed it is gone', () => {
    const stored = replayBodySealer(new SecretBox({ current: Buffer.alloc(32, 2) })).seal(body);
    expect(() => sealer.open(stored)).toThrow(ReplayUnavailableError);
    let thrown: unknown;
    try {
      sealer.open(stored);
    } catch (error) {
      thrown = error;
    }
    const problem = renderProblem(thrown, 'req_1');
    expect(problem.status).toBe(410);
    expect(problem.body).toMatchObject({ code: 'idempotency_replay_unavailable', status: 410 });
    expect(JSON.stringify(problem.body)).not.toMatch(/whsec_|sealed:/);
  });
});
