/**
 * The fleet benchmark's same-run baseline: a bare relay that speaks just enough of the tunnel
 * protocol for the edge's real TunnelClient, on the same `ws` and Node as the replica, with
 * nothing of the replica's own work: no validation (JSON.parse only), no database, no
 * authentication (the token "bare-<k>" is edge k, of owner k / 10), no admission. It welcomes
 * (resuming from the last sequence it saw), acknowledges each snapshot and delta at once,
 * answers pings, pings every tunnel every 5 s (the replica's heartbeat), and sends each state
 * change to its owner's app sockets as the replica's app socket does (`/app?owner=<o>`, the
 * Home Assistant event message, serialized once). What the replica costs beyond this, on the
 * same machine in the same run, is its own; what this costs is the floor of the harness and the
 * machine (two cores shared with the simulated edges).
 * stdout: `ready {"http":PORT}`; GET /loop answers `{"maxMs"}`, the longest event-loop delay since
 * the last GET /loop (and starts a new window).
 */
import http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { WebSocketServer, type WebSocket } from 'ws';
import { tunnel } from '@smarthome/protocol';

const HEARTBEAT_MS = 5_000;
const loop = monitorEventLoopDelay({ resolution: 5 });
loop.enable();

/** per edge, the last sequence seen (a reconnect resumes from it) */
const lastSeq = new Map<number, number>();
/** per owner, its app sockets */
const apps = new Map<number, Set<WebSocket>>();

const server = http.createServer((req, res) => {
  if (req.url === '/loop') {
    res.end(JSON.stringify({ maxMs: loop.max / 1e6 }));
    loop.reset();
    return;
  }
  res.statusCode = 404;
  res.end();
});
const wss = new WebSocketServer({ noServer: true });

server.on('upgrade', (req, socket, head) => {
  const url = new URL(req.url ?? '/', 'http://bare');
  if (url.pathname === '/app') {
    const owner = Number(url.searchParams.get('owner'));
    wss.handleUpgrade(req, socket, head, (ws) => {
      const set = apps.get(owner) ?? new Set<WebSocket>();
      apps.set(owner, set);
      set.add(ws);
      ws.on('close', () => set.delete(ws));
    });
    return;
  }
  const m = /^Bearer bare-(\d+)$/.exec(req.headers.authorization ?? '');
  if (!m) {
    socket.end('HTTP/1.1 401 Unauthorized\r\nConnection: close\r\n\r\n');
    return;
  }
  const edge = Number(m[1]);
  wss.handleUpgrade(req, socket, head, (ws) => tunnelOf(edge, ws));
});

function tunnelOf(edge: number, ws: WebSocket): void {
  let alive = true;
  const beat = () => {
    if (!alive) return void ws.terminate();
    alive = false;
    ws.ping();
  };
  let heartbeat: NodeJS.Timeout = setTimeout(
    () => (heartbeat = setInterval(beat, HEARTBEAT_MS)),
    Math.random() * HEARTBEAT_MS,
  );
  ws.on('pong', () => (alive = true));
  ws.on('close', () => clearTimeout(heartbeat));
  ws.on('error', () => ws.terminate());
  ws.on('message', (data) => {
    const msg = JSON.parse(data.toString()) as {
      type: string;
      seq?: number;
      ts?: number;
      resume_from?: number | null;
      delta?: tunnel.Delta;
    };
    switch (msg.type) {
      case 'hello': {
        const last = lastSeq.get(edge);
        const acked = msg.resume_from != null && last !== undefined && last >= msg.resume_from ? last : null;
        ws.send(
          JSON.stringify({
            type: 'welcome',
            protocol: tunnel.TUNNEL_PROTOCOL_VERSION,
            edge_id: edge + 1,
            acked_seq: acked,
            heartbeat_ms: HEARTBEAT_MS,
          }),
        );
        return;
      }
      case 'snapshot':
      case 'delta':
        lastSeq.set(edge, msg.seq!);
        ws.send(JSON.stringify({ type: 'ack', seq: msg.seq }));
        if (msg.delta?.kind === 'state') announce(edge, msg.delta);
        return;
      case 'ping':
        ws.send(JSON.stringify({ type: 'pong', ts: msg.ts }));
        return;
    }
  });
}

function announce(edge: number, delta: Extract<tunnel.Delta, { kind: 'state' }>): void {
  const sockets = apps.get(Math.floor(edge / 10));
  if (!sockets?.size) return;
  const event = JSON.stringify({
    event_type: 'state_changed',
    data: { entity_id: delta.state.entity_id, old_state: delta.old_state ?? null, new_state: delta.state },
    time_fired: new Date().toISOString(),
  });
  const text = `{"id":1,"type":"event","event":${event}}`;
  for (const ws of sockets) ws.send(text);
}

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address && typeof address === 'object') console.log(`ready ${JSON.stringify({ http: address.port })}`);
});
process.on('SIGTERM', () => process.exit(0));
