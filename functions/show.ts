// How a value found in a request is quoted in a message: JSON, cut to a readable length. A request can
// carry megabytes in one field; an error message quoting all of it would be unreadable and could itself
// push the response over the 4 MiB message limit.
const MAX_SHOWN = 120;

/** JSON of the value (`nothing` for undefined), at most MAX_SHOWN characters, marked when cut. */
export function shown(value: unknown): string {
  let text: string;
  try {
    // undefined inside JSON.stringify's result type: functions and symbols, which decoded protobuf never holds.
    text = value === undefined ? 'nothing' : (JSON.stringify(value) ?? typeof value);
  } catch {
    text = typeof value; // bigint, cycles: not in decoded protobuf, but never a crash
  }
  return text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}… (${text.length} characters)` : text;
}
