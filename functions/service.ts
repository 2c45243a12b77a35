// gRPC service definitions for @grpc/grpc-js built from the protobuf-es descriptors of the committed protos:
// the wire names (/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction) and the field layout the
// codec follows both come from the generated code, so nothing here can drift from the .proto files.
import type { ServiceDefinition } from '@grpc/grpc-js';
import type { DescMessage, DescService, Message } from '@bufbuild/protobuf';
import { decode, encode } from './codec.js';
import { FunctionRunnerService } from './generated/fn/v1/run_function_pb.js';
import { Health } from './generated/grpc/health/v1/health_pb.js';

/** The largest message accepted or sent, as in Crossplane's Go and Python SDKs. */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

// codec.ts: byte-identical to protobuf-es's toBinary/fromBinary (tested), and fast on Struct-heavy messages.
const codec = (schema: DescMessage) => ({
  serialize: (message: Message): Buffer => {
    const bytes = encode(schema, message);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  },
  deserialize: (bytes: Buffer): Message => decode(schema, bytes),
});

/** Keys are the methods' proto names (RunFunction, Check, Watch): the handlers and the generic client use them. */
export function serviceDefinition(service: DescService): ServiceDefinition {
  const def: Record<string, ServiceDefinition[string]> = {};
  for (const m of service.methods) {
    const input = codec(m.input);
    const output = codec(m.output);
    def[m.name] = {
      path: `/${service.typeName}/${m.name}`,
      originalName: m.name,
      requestStream: m.methodKind === 'client_streaming' || m.methodKind === 'bidi_streaming',
      responseStream: m.methodKind === 'server_streaming' || m.methodKind === 'bidi_streaming',
      requestSerialize: input.serialize,
      requestDeserialize: input.deserialize,
      responseSerialize: output.serialize,
      responseDeserialize: output.deserialize,
    };
  }
  return def;
}

export const functionRunnerService = serviceDefinition(FunctionRunnerService);
export const healthService = serviceDefinition(Health);
