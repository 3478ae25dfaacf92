/**
 * A real SMTP server for tests, run as its own process (spawned by mail.ts): smtp-server
 * with STARTTLS (its built-in self-signed certificate), any sender and recipient. Each message
 * goes to the parent over IPC before the server answers 250. argv[2]: the port (0 = any).
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

const port = Number(process.argv[2] ?? 0);
const server = new SMTPServer({
  authOptional: true,
  logger: false,
  onData(stream, session, callback) {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      const message = {
        from: session.envelope.mailFrom ? session.envelope.mailFrom.address : null,
        to: session.envelope.rcptTo.map((r) => r.address),
        secure: session.secure,
        raw: Buffer.concat(chunks).toString('base64'),
      };
      process.send?.(message, () => callback());
    });
  },
});
server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`ready ${JSON.stringify({ smtp: (server.server.address() as AddressInfo).port })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
process.on('disconnect', () => process.exit(0));
