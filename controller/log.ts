// JSON logs, one object a line on stderr, in the shape log collectors expect from controllers (ts, level,
// msg, then fields). Every line about a pool carries `nodepool`, and `nodeclaim` when one is concerned.

export type Level = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<Level, number> = { debug: 0, info: 1, warn: 2, error: 3 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  with(fields: Record<string, unknown>): Logger;
}

export function jsonLogger(
  level: Level,
  write: (line: string) => void = (l) => process.stderr.write(l),
  now: () => number = Date.now,
  base: Record<string, unknown> = {},
): Logger {
  const emit =
    (lvl: Level) =>
    (msg: string, fields: Record<string, unknown> = {}): void => {
      if (ORDER[lvl] < ORDER[level]) return;
      const rest = Object.fromEntries(
        Object.entries({ ...base, ...fields }).map(([k, v]) => [k, v instanceof Error ? v.message : v]),
      );
      write(`${JSON.stringify({ ts: new Date(now()).toISOString(), level: lvl, msg, ...rest })}\n`);
    };
  return {
    debug: emit('debug'),
    info: emit('info'),
    warn: emit('warn'),
    error: emit('error'),
    with: (fields) => jsonLogger(level, write, now, { ...base, ...fields }),
  };
}

/** A thrown value as a log field: an Error's message, anything else as text. */
export const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));
