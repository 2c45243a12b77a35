// A small gRPC client for the function, as Crossplane would call it: for the tests, the benchmark and
// debugging a running function. Same service definitions as the server, so same wire names and messages.
import {
  credentials as grpcCredentials,
  makeGenericClientConstructor,
  Metadata,
  type ChannelCredentials,
  type Client,
  type ServiceDefinition,
  type ServiceError,
} from '@grpc/grpc-js';
import type { RunFunctionRequest, RunFunctionResponse } from '@crossplane-org/function-sdk-typescript';
import type { HealthCheckRequest, HealthCheckResponse } from './generated/grpc/health/v1/health.js';
import { functionRunnerService, healthService, MAX_MESSAGE_BYTES } from './service.js';

type Unary<I, O> = (request: I, callback: (err: ServiceError | null, response?: O) => void) => void;

const RunnerClient = makeGenericClientConstructor(functionRunnerService, 'FunctionRunnerService');
const HealthClient = makeGenericClientConstructor(healthService, 'Health');

export interface FunctionClient {
  runFunction(request: RunFunctionRequest, deadlineMs?: number): Promise<RunFunctionResponse>;
  check(service?: string): Promise<HealthCheckResponse>;
  close(): void;
}

function call<I, O>(client: Client, method: string, request: I, deadlineMs: number): Promise<O> {
  const fn = (
    client as unknown as Record<string, Unary<I, O> & ((req: I, meta: unknown, opts: unknown, cb: unknown) => void)>
  )[method];
  if (!fn) throw new Error(`no method ${method}`);
  return new Promise((resolve, reject) => {
    fn.call(
      client,
      request,
      new Metadata(),
      { deadline: Date.now() + deadlineMs },
      (err: ServiceError | null, response?: O) => (err ? reject(err) : resolve(response as O)),
    );
  });
}

/** target: host:port; credentials: insecure unless given (e.g. credentials.createSsl(ca, key, cert)). */
export function functionClient(
  target: string,
  creds: ChannelCredentials = grpcCredentials.createInsecure(),
): FunctionClient {
  const options = {
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
    'grpc-node.flow_control_window': MAX_MESSAGE_BYTES,
  };
  const runner = new RunnerClient(target, creds, options);
  const health = new HealthClient(target, creds, options);
  return {
    runFunction: (request, deadlineMs = 30_000) =>
      call<RunFunctionRequest, RunFunctionResponse>(runner, 'runFunction', request, deadlineMs),
    check: (service = '') => call<HealthCheckRequest, HealthCheckResponse>(health, 'check', { service }, 10_000),
    close() {
      runner.close();
      health.close();
    },
  };
}

export interface RawFunctionClient {
  /** RunFunction with bytes in and bytes out: the same path and framing, no (de)serialisation here. */
  call(request: Uint8Array, deadlineMs?: number): Promise<Buffer>;
  close(): void;
}

/**
 * A RunFunction client that sends bytes as given: for malformed requests in tests and for the benchmark,
 * which times the function and not this client's protobuf work. Up to twice the message limit can be
 * sent, so that oversized requests reach the server.
 */
export function rawFunctionClient(
  target: string,
  creds: ChannelCredentials = grpcCredentials.createInsecure(),
): RawFunctionClient {
  const identity = (b: Buffer): Buffer => b;
  const def = {
    runFunction: {
      ...(functionRunnerService.runFunction as ServiceDefinition[string]),
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
    },
  };
  const RawClient = makeGenericClientConstructor(def, 'FunctionRunnerService');
  const client = new RawClient(target, creds, {
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': 4 * MAX_MESSAGE_BYTES,
    'grpc-node.flow_control_window': MAX_MESSAGE_BYTES,
  });
  return {
    call: (request, deadlineMs = 30_000) =>
      call<Buffer, Buffer>(client, 'runFunction', Buffer.from(request), deadlineMs),
    close: () => client.close(),
  };
}
