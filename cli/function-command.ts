// `noderotation function`: serve the Crossplane composition function, with the flags Crossplane's SDKs
// use (Crossplane runs the image with no arguments and mounts the certificates at TLS_SERVER_CERTS_DIR).
// Steps: parse the flags → load TLS → start the server (bind gRPC, bind metrics) → serve until a stop signal
// → shut down. Anything unusable before serving (a flag, the certificates, a port in use) exits 2 with a
// message naming it, and nothing stays bound.
import { startFunctionServer, grpcAddress, splitHostPort, type FunctionServer, type Log } from '../functions/server.js';
import { CredentialsError, serverCredentials, type FunctionCredentials } from '../functions/tls.js';
import { parseDuration } from '../src/util/duration.js';
import type { FunctionOptions } from './function-flags.js';
import { UsageError } from './io.js';
import { EXIT_INVALID, EXIT_OK, type Io } from './process.js';

export interface FunctionCommandEnv {
  /** TLS_SERVER_CERTS_DIR */
  tlsServerCertsDir?: string;
  /** Resolves when the process should stop (SIGTERM, SIGINT). */
  stopSignal: Promise<string>;
}

interface FunctionFlags {
  /** grpc-js form */
  address: string;
  insecure: boolean;
  tlsCertsDir: string | undefined;
  metricsAddress: string | null;
  debug: boolean;
  /** meta.ttl in whole seconds: how soon Crossplane calls again without a change (a new NodePool is seen). */
  responseTtlSeconds: number;
}

/** Step 1: the flags, each checked; a bad one is a UsageError naming it. Nothing is bound yet. */
export function parseFunctionFlags(values: FunctionOptions, tlsServerCertsDir: string | undefined): FunctionFlags {
  const address = values.address;
  const metricsAddress = values.metricsAddress;
  checkAddress('--address', address);
  if (metricsAddress !== '') checkAddress('--metrics-address', metricsAddress);
  return {
    address: grpcAddress(address),
    insecure: values.insecure,
    tlsCertsDir: values.tlsCertsDir ?? tlsServerCertsDir,
    metricsAddress: metricsAddress === '' ? null : metricsAddress,
    debug: values.debug,
    responseTtlSeconds: responseTtl(values.responseTtl),
  };
}

/** A Go duration of at least 1s in whole seconds (meta.ttl is a protobuf Duration; Crossplane requeues after it). */
function responseTtl(text: string): number {
  let seconds: number;
  try {
    seconds = parseDuration(text);
  } catch (err) {
    throw new UsageError(`--response-ttl: ${(err as Error).message}`);
  }
  if (!Number.isInteger(seconds) || seconds < 1) {
    throw new UsageError(`--response-ttl: found "${text}"; use whole seconds, at least 1s (e.g. 60s, 5m)`);
  }
  return seconds;
}

function checkAddress(flag: string, value: string): void {
  try {
    splitHostPort(value);
  } catch (err) {
    throw new UsageError(`${flag}: ${(err as Error).message}`);
  }
}

/** Step 2: the server's credentials; missing or unreadable certificates are a UsageError. */
function loadCredentials(flags: FunctionFlags): FunctionCredentials {
  try {
    return serverCredentials({ insecure: flags.insecure, tlsCertsDir: flags.tlsCertsDir });
  } catch (err) {
    if (err instanceof CredentialsError) throw new UsageError(`${err.message}`);
    throw err;
  }
}

/** One JSON object per line on stderr, as Crossplane's functions log; --debug adds one line per call. */
function jsonLog(io: Io, debug: boolean): Log {
  return (level, message, fields = {}) => {
    if (level === 'debug' && !debug) return;
    io.stderr.write(`${JSON.stringify({ level, ts: new Date(io.now()).toISOString(), msg: message, ...fields })}\n`);
  };
}

/** Steps 1–3: parses the flags, loads TLS and starts serving; throws UsageError before binding anything. */
export async function startFromArgs(
  values: FunctionOptions,
  io: Io,
  tlsServerCertsDir: string | undefined,
): Promise<FunctionServer> {
  const flags = parseFunctionFlags(values, tlsServerCertsDir);
  const credentials = loadCredentials(flags);
  return startFunctionServer({
    address: flags.address,
    credentials,
    metricsAddress: flags.metricsAddress,
    log: jsonLog(io, flags.debug),
    now: io.now,
    ttlSeconds: flags.responseTtlSeconds,
  });
}

export async function runFunctionCommand(values: FunctionOptions, io: Io, env: FunctionCommandEnv): Promise<number> {
  let server: FunctionServer;
  try {
    server = await startFromArgs(values, io, env.tlsServerCertsDir);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    // A port in use or an address that cannot be bound: startFunctionServer has released whatever it bound.
    io.stderr.write(`noderotation function: cannot start: ${(err as Error).message}\n`);
    return EXIT_INVALID;
  }
  // Steps 4–5: serve until SIGTERM or SIGINT, then shut down.
  const signal = await env.stopSignal;
  jsonLog(io, false)('info', `${signal}: shutting down`);
  await server.shutdown();
  return EXIT_OK;
}
