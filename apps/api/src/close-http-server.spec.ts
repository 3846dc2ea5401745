import { createServer, type Server } from 'node:http';
import { closeHttpServer } from './close-http-server';

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

describe('closeHttpServer', () => {
  let server: Server;

  afterEach(() => {
    server.closeAllConnections();
  });

  it('lets the in-flight request finish, then closes its keep-alive connection at once', async () => {
    server = createServer((_request, response) => {
      setTimeout(() => response.end('done'), 300);
    });
    server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    // fetch keeps its connection alive after the response.
    const answer = fetch(`http://127.0.0.1:${port}/`).then((response) => response.text());
    await sleep(100);

    const started = Date.now();
    await closeHttpServer(server);

    expect(await answer).toBe('done');
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
