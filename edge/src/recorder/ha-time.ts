/** Home Assistant's time strings. */

/** HA's isoformat for UTC datetimes, "2026-11-23T21:35:10.123000+00:00". */
export function haIsoTime(epochSeconds: number): string {
  const ms = Math.round(epochSeconds * 1000);
  return `${new Date(ms).toISOString().slice(0, 23)}000+00:00`;
}

/**
 * haIsoTime with each minute's "YYYY-MM-DDTHH:MM:" made once (a Date and toISOString per item
 * were most of a minimal REST answer's time); the seconds and milliseconds are integer math.
 */
export function isoTimeFormatter(): (epochSeconds: number) => string {
  const minutes = new Map<number, string>();
  return (epochSeconds) => {
    const ms = Math.round(epochSeconds * 1000);
    if (ms < 0) return haIsoTime(epochSeconds);
    const minute = Math.floor(ms / 60_000);
    let prefix = minutes.get(minute);
    if (prefix === undefined) {
      prefix = new Date(minute * 60_000).toISOString().slice(0, 17);
      minutes.set(minute, prefix);
    }
    const rest = ms - minute * 60_000;
    const s = Math.floor(rest / 1000);
    const f = rest - s * 1000;
    return `${prefix}${s < 10 ? '0' : ''}${s}.${f < 10 ? '00' : f < 100 ? '0' : ''}${f}000+00:00`;
  };
}
