import type { Server } from 'node:http';

/**
 * Stops taking connections and resolves once every in-flight request has been answered.
 * Keep-alive connections are closed as soon as they are idle (Node's `close()` closes only those
 * idle at the moment it is called).
 */
export function closeHttpServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    const idle = setInterval(() => server.closeIdleConnections(), 100);
    // Called with an error when the server was not listening: nothing to wait for either way.
    server.close(() => {
      clearInterval(idle);
      resolve();
    });
    server.closeIdleConnections();
  });
}
