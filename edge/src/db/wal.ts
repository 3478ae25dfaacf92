/** The SQLite file's WAL settings, shared by the edge's connection and the recorder's writer thread. */

/**
 * WAL pages before a commit checkpoints them into the file (SQLite's default: 1,000). A hot page
 * (an index leaf each recorder batch touches) is copied back once per checkpoint, not once per
 * few batches: the recorder's SQL took 6.2 -> 4.0 us of CPU a row (micro-benchmark, every row a
 * new attribute set; 2,000 pages: 5.2, 4,000: 4.6; in the edge: README "Ingest cost (h1)"). The
 * WAL file grows to ~40 MB (4 KB pages) and stays that size; with synchronous = NORMAL the WAL is
 * synced only at a checkpoint, so a power loss (not a process crash) may take up to this many
 * pages of commits, less what the OS wrote back meanwhile.
 */
export const WAL_AUTOCHECKPOINT_PAGES = 10_000;
