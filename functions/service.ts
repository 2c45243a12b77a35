// The gRPC service definitions for @grpc/grpc-js: RunFunction as the official Crossplane TypeScript SDK
// generates it (ts-proto, from Crossplane's run_function.proto), grpc.health.v1 generated here the same way
// (functions/generated/). Neither is written by hand, so neither can drift from its .proto.
import { FunctionRunnerServiceService } from '@crossplane-org/function-sdk-typescript';
import { HealthService } from './generated/grpc/health/v1/health.js';

/** The largest message accepted or sent, as in Crossplane's Go and Python SDKs. */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/** Keys are the methods' ts-proto names (runFunction, check, watch): the handlers and the clients use them. */
export const functionRunnerService = FunctionRunnerServiceService;
export const healthService = HealthService;
