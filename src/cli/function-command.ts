// `noderotation function`: serve the Crossplane composition function, with the flags Crossplane's SDKs
// use (Crossplane runs the image with no arguments and mounts the certificates at TLS_SERVER_CERTS_DIR).
import { parseArgs } from 'node:util';
import { startFunctionServer, grpcAddress, type FunctionServer, type Log } from '../../functions/server.js';
import { CredentialsError, serverCredentials } from '../../functions/tls.js';
import { EXIT_INVALID, EXIT_OK } from './explain-command.js';
import { UsageError } from './io.js';
import type { Io } from './main.js';

export interface FunctionCommandEnv {
  /** TLS_SERVER_CERTS_DIR */
  tlsServerCertsDir?: string;
  /** Resolves when the process should stop (SIGTERM, SIGINT). */
  stopSignal: Promise<string>;
}

/** Parses the flags and starts serving; throws UsageError or CredentialsError before binding anything. */
export async function startFromArgs(
  args: string[],
  io: Io,
  tlsServerCertsDir: string | undefined,
): Promise<FunctionServer> {
  const { values } = parseArgs({
    args,
    options: {
      address: { type: 'string', default: ':9443' },
      insecure: { type: 'boolean', default: false },
      'tls-certs-dir': { type: 'string' },
      'metrics-address': { type: 'string', default: ':8080' },
      debug: { type: 'boolean', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  const credentials = serverCredentials({
    insecure: values.insecure === true,
    tlsCertsDir: values['tls-certs-dir'] ?? tlsServerCertsDir,
  });
  const debug = values.debug === true;
  // One JSON object per line on stderr, as Crossplane's functions log; --debug adds one line per call.
  const log: Log = (level, message, fields = {}) => {
    if (level === 'debug' && !debug) return;
    io.stderr.write(`${JSON.stringify({ level, ts: new Date(io.now()).toISOString(), msg: message, ...fields })}\n`);
  };
  const metricsAddress = values['metrics-address'] as string;
  return startFunctionServer({
    address: grpcAddress(values.address as string),
    credentials,
    metricsAddress: metricsAddress === '' ? null : metricsAddress,
    log,
    now: io.now,
  });
}

export async function runFunctionCommand(args: string[], io: Io, env: FunctionCommandEnv): Promise<number> {
  let server: FunctionServer;
  try {
    server = await startFromArgs(args, io, env.tlsServerCertsDir);
  } catch (err) {
    if (err instanceof CredentialsError) throw new UsageError(`function: ${err.message}`);
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) throw err;
    io.stderr.write(`noderotation function: cannot start: ${(err as Error).message}\n`);
    return EXIT_INVALID;
  }
  const signal = await env.stopSignal;
  io.stderr.write(
    `${JSON.stringify({ level: 'info', ts: new Date(io.now()).toISOString(), msg: `${signal}: shutting down` })}\n`,
  );
  await server.shutdown();
  return EXIT_OK;
}

/** SIGTERM (Kubernetes) or SIGINT (a terminal), whichever comes first. */
export function processStopSignal(): Promise<string> {
  return new Promise((resolve) => {
    for (const sig of ['SIGTERM', 'SIGINT'] as const) process.once(sig, () => resolve(sig));
  });
}
