// JSON as google.protobuf.Struct carries it: every Kubernetes object in a RunFunction message. The SDK's
// generated messages type a Struct as `{ [key: string]: any }`; these are the values the function reads and
// writes there.
export type JsonValue = number | string | boolean | null | JsonObject | JsonValue[];
export type JsonObject = { [key: string]: JsonValue };
