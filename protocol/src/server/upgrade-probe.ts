/** Test support (not a test file): raw HTTP upgrade requests, for the cloud's and the edge's upgrade tests. */
import net from 'node:net';

export interface UpgradeProbe {
  /** 0 when no answer came */
  status: number;
  headers: Record<string, string>;
  /** the body parsed as JSON, or undefined */
  body: unknown;
  text: string;
  /** the server closed the connection for good (not only its sending side) within the wait */
  closed: boolean;
}

/**
 * Sends one HTTP/1.1 request asking to switch protocols (`Upgrade: websocket` or `h2c`) on a
 * raw socket and reports the answer and whether the server then let the connection go. The
 * client behaves like the attacker of issue #13: it never closes its own side (allowHalfOpen)
 * and, once the server has sent FIN, keeps writing. A server that destroyed its socket answers
 * that with a reset (the client sees 'close'); one that only ended it, or never answered, keeps
 * the socket and its file descriptor, and `closed` is false.
 */
export async function probeUpgrade(
  baseUrl: string,
  path: string,
  opts: { upgrade: 'websocket' | 'h2c'; headers?: Record<string, string>; waitMs?: number },
): Promise<UpgradeProbe> {
  const { hostname, port } = new URL(baseUrl);
  const socket = net.connect({ host: hostname, port: Number(port), allowHalfOpen: true });
  const chunks: Buffer[] = [];
  socket.on('data', (d: Buffer) => chunks.push(d));
  socket.on('error', () => {});
  const upgradeHeaders =
    opts.upgrade === 'websocket'
      ? {
          Connection: 'Upgrade',
          Upgrade: 'websocket',
          'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
          'Sec-WebSocket-Version': '13',
        }
      : { Connection: 'Upgrade, HTTP2-Settings', Upgrade: 'h2c', 'HTTP2-Settings': 'AAMAAABkAARAAAAAAAIAAAAA' };
  const headers = { Host: `${hostname}:${port}`, ...upgradeHeaders, ...opts.headers };
  socket.write(
    `GET ${path} HTTP/1.1\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}`)
      .join('\r\n')}\r\n\r\n`,
  );
  let poke: NodeJS.Timeout | undefined;
  socket.once('end', () => {
    poke = setInterval(() => {
      if (!socket.destroyed) socket.write('x');
    }, 20);
  });
  const closed = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), opts.waitMs ?? 2000);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
  clearInterval(poke);
  socket.destroy();
  return { ...parseResponse(Buffer.concat(chunks).toString('utf8')), closed };
}

function parseResponse(raw: string): Omit<UpgradeProbe, 'closed'> {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return { status: 0, headers: {}, body: undefined, text: raw };
  const [statusLine, ...lines] = raw.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let text = raw.slice(end + 4);
  if (headers['content-length'] !== undefined) text = text.slice(0, Number(headers['content-length']));
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: Number(statusLine.split(' ')[1]) || 0, headers, body, text };
}
