import http from 'node:http';

/**
 * A POST over a connection of its own (no keep-alive pool), sending `chunks` as given, so a test
 * controls Content-Length and chunking, and a server that closes the connection after refusing a
 * body affects no other request. A connection reset while the body is still being sent (the server
 * answered and closed first) resolves as status -1.
 */
export function rawPost(
  url: string,
  headers: Record<string, string | number>,
  chunks: Uint8Array[],
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers, agent: false }, (res) => {
      let body = '';
      res.on('data', (d) => {
        body += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', (err) =>
      (err as NodeJS.ErrnoException).code === 'EPIPE' || (err as NodeJS.ErrnoException).code === 'ECONNRESET'
        ? resolve({ status: -1, body: '' })
        : reject(err),
    );
    for (const c of chunks) req.write(c);
    req.end();
  });
}
