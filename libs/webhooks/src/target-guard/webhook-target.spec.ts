import { hostname } from 'node:os';
import {
  assertAllowedUrl,
  ForbiddenTargetError,
  NAME_NOT_PUBLIC,
  resolveAllowedTarget,
} from './webhook-target';

describe('assertAllowedUrl', () => {
  it.each([
    'http://localhost/hook',
    'http://localhost./hook',
    'http://foo.localhost/hook',
    'http://foo.localhost./hook',
    'http://FOO.LOCALHOST./hook',
  ])('refuses %s as localhost, with or without the root dot', (url) => {
    expect(() => assertAllowedUrl(new URL(url), false)).toThrow(
      new ForbiddenTargetError('url must not name localhost'),
    );
  });

  it('takes a name that only ends like localhost', () => {
    expect(() => assertAllowedUrl(new URL('https://notlocalhost./hook'), false)).not.toThrow();
  });
});

describe('resolveAllowedTarget: no oracle about the network’s own names', () => {
  // This machine's own name resolves to a loopback address (/etc/hosts); `.invalid` never resolves.
  it.each([`http://${hostname()}/hook`, 'http://no-such-host.invalid/hook'])(
    'refuses %s with the same words as every name that did not lead to public addresses only',
    async (url) => {
      const refusal = await resolveAllowedTarget(new URL(url), false).catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(ForbiddenTargetError);
      expect((refusal as Error).message).toBe(NAME_NOT_PUBLIC);
    },
  );

  it('with private targets allowed, connects to what the name resolves to', async () => {
    await expect(resolveAllowedTarget(new URL(`http://${hostname()}/hook`), true)).resolves.toMatchObject({
      address: expect.any(String),
    });
  });
});
