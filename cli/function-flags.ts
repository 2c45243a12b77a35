// `noderotation function`'s flags, declared once (the flags Crossplane's function SDKs give a function), and
// light: the program declares every command without loading the gRPC server. function-command.ts checks them.
import { Command } from 'commander';
import { parseAlone } from '../runtime/cli/parse-alone.js';
import { UsageError } from './io.js';

/** The values commander parses from the flags below. */
export interface FunctionOptions {
  address: string;
  insecure: boolean;
  tlsCertsDir?: string;
  metricsAddress: string;
  debug: boolean;
  responseTtl: string;
}

/** Adds the function's flags to `cmd`. */
export function functionOptions(cmd: Command): Command {
  return cmd
    .option('--address <addr>', 'HOST:PORT or :PORT the gRPC server listens on', ':9443')
    .option('--insecure', 'serve without TLS (local tests only: Crossplane requires mTLS)', false)
    .option('--tls-certs-dir <dir>', 'tls.crt, tls.key and ca.crt (default: $TLS_SERVER_CERTS_DIR)')
    .option('--metrics-address <addr>', 'HOST:PORT or :PORT of /metrics; an empty value disables it', ':8080')
    .option('--debug', 'log one line per call', false)
    .option('--response-ttl <duration>', 'how soon Crossplane calls again without a change (whole seconds)', '60s');
}

/** The function's flags parsed from `args` alone (its tests; the program parses them as a subcommand). */
export function parseFunctionArgs(args: string[]): FunctionOptions {
  return parseAlone<FunctionOptions>(functionOptions(new Command('function')), args, (m) => new UsageError(m));
}
