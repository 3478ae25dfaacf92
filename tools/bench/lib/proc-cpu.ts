import fs from 'node:fs';

/** USER_HZ on Linux: the unit of /proc's CPU times */
const TICKS_PER_S = 100;

/** User + system CPU ms so far of a process or thread, from its /proc stat file (throws once it is gone). */
export function statCpuMs(statFile: string): number {
  // fields after the command's closing parenthesis (a command may hold one): utime and stime are the 12th and 13th
  const text = fs.readFileSync(statFile, 'utf8');
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_S;
}

/** A process's user + system CPU ms so far (NaN once it is gone). */
export function processCpuMs(pid: number): number {
  try {
    return statCpuMs(`/proc/${pid}/stat`);
  } catch {
    return NaN;
  }
}

/**
 * CPU ms so far of a process's threads, summed by thread name (/proc/<pid>/task/<tid>/comm: Node's
 * MainThread, V8Worker for V8's helpers (the GC's among them), WorkerThread for worker_threads,
 * libuv-worker for libuv's pool); empty once the process is gone.
 */
export function threadCpu(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  let tids: string[] = [];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const name = fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      out[name] = (out[name] ?? 0) + statCpuMs(`/proc/${pid}/task/${tid}/stat`);
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

/** CPU ms so far of each PostgreSQL server process on this machine (the postmaster, its backends, the WAL writer, the checkpointer). */
export function postgresCpu(): Map<number, number> {
  const out = new Map<number, number>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
    } catch {
      continue;
    }
    const ms = processCpuMs(Number(entry));
    if (Number.isFinite(ms)) out.set(Number(entry), ms);
  }
  return out;
}

/**
 * The PostgreSQL server's CPU ms since `before` (postgresCpu()): the database's share of the cores
 * the replica runs on. Backends started since count whole; one that exited in between takes its
 * share with it (the replica's pool keeps its busy connections), so this is a lower bound.
 */
export function postgresCpuSince(before: Map<number, number>): number {
  let total = 0;
  for (const [pid, ms] of postgresCpu()) total += ms - (before.get(pid) ?? 0);
  return total;
}

/**
 * ms a thread has spent runnable but waiting for a core (the second field of its /proc schedstat;
 * the main thread of a process: /proc/<pid>/schedstat). Its growth over a window, against the
 * window's length, is how far the other processes on the cores starved it (NaN once it is gone).
 */
export function runQueueWaitMs(pid: number, tid = pid): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').trim().split(' ');
    return Number(fields[1]) / 1e6;
  } catch {
    return NaN;
  }
}
