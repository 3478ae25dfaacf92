import type { Socket } from 'node:net';

/**
 * The most a client's CONNECT may declare (client id, credentials and will together; real ones
 * are well under 1 KB). MQTT allows a packet of up to 256 MB, and Aedes buffers a packet whole
 * before it parses it: without this bound, an anonymous peer could make the broker hold 256 MB
 * per connection before it is asked for a password.
 */
export const MAX_CONNECT_BYTES = 64 * 1024;

/**
 * Watches the first bytes the broker reads from a socket: the CONNECT's fixed header (a type byte,
 * then the remaining length in 1–4 bytes of 7 bits). A declared length over `max` closes the
 * socket before more is buffered (as soon as the length bytes read so far exceed it). Attach it
 * after Aedes took the socket: Aedes reads with `read()` on 'readable', so this 'data' listener
 * sees each chunk as Aedes reads it, without changing how the socket flows, and it is removed
 * once the length is known (no cost per packet).
 */
export function guardConnectLength(socket: Socket, max = MAX_CONNECT_BYTES, onRefused?: () => void): void {
  let seen = 0;
  let length = 0;
  let multiplier = 1;
  const onData = (chunk: Buffer) => {
    for (let i = 0; i < chunk.length; i++, seen++) {
      // byte 0 is the packet type: Aedes refuses anything but a CONNECT itself
      if (seen === 0) continue;
      const byte = chunk[i];
      length += (byte & 0x7f) * multiplier;
      multiplier *= 128;
      const done = (byte & 0x80) === 0 || seen === 4;
      if (length > max) {
        socket.off('data', onData);
        onRefused?.();
        socket.destroy();
        return;
      }
      if (done) {
        socket.off('data', onData);
        return;
      }
    }
  };
  socket.on('data', onData);
}
