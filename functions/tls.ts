// Server credentials as Crossplane's SDKs choose them: --insecure for local development and `crossplane
// render`; otherwise mutual TLS from the directory Crossplane mounts (tls.crt, tls.key, ca.crt), with the
// client's certificate required and verified against ca.crt. Neither: refuse to start rather than serve
// plaintext by accident.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ServerCredentials } from '@grpc/grpc-js';

export class CredentialsError extends Error {}

export function serverCredentials(options: { insecure: boolean; tlsCertsDir: string | undefined }): ServerCredentials {
  if (options.insecure) return ServerCredentials.createInsecure();
  const dir = options.tlsCertsDir;
  if (!dir) {
    throw new CredentialsError(
      'no TLS certificates: pass --tls-certs-dir DIR (or set TLS_SERVER_CERTS_DIR) with tls.crt, tls.key and ca.crt, ' +
        'or --insecure for local development',
    );
  }
  const read = (file: string): Buffer => {
    try {
      return readFileSync(join(dir, file));
    } catch (err) {
      throw new CredentialsError(`cannot read ${join(dir, file)}: ${(err as Error).message}`);
    }
  };
  // checkClientCertificate = true: a client must present a certificate signed by ca.crt (real mTLS).
  // Node's TLS defaults already refuse anything below TLS 1.2.
  return ServerCredentials.createSsl(
    read('ca.crt'),
    [{ cert_chain: read('tls.crt'), private_key: read('tls.key') }],
    true,
  );
}
