// Server credentials as Crossplane's SDKs choose them: --insecure for local development and `crossplane
// render`; otherwise mutual TLS from the directory Crossplane mounts (tls.crt, tls.key, ca.crt), with the
// client's certificate required and verified against ca.crt. Neither: refuse to start rather than serve
// plaintext by accident.
//
// The client certificate is verified here, not by OpenSSL. `crossplane core init` issues Crossplane's client
// certificate with its CA's subject and no authority key identifier; OpenSSL then takes it for a self-signed
// certificate (X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT) and fails the handshake, while Go's verifier, which the
// Go function SDK uses, looks the issuer up by name and checks the signature. So the TLS server requests a
// certificate without acting on OpenSSL's verdict, and `clientCertificateProblem` applies Go's rules
// (crypto/tls RequireAndVerifyClientCert with ClientCAs = ca.crt) before the connection reaches gRPC.
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  createSecureContext,
  createServer,
  type DetailedPeerCertificate,
  type Server as TlsServer,
  type TLSSocket,
} from 'node:tls';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { ServerCredentials } from '@grpc/grpc-js';
import { shown } from './show.js';

export class CredentialsError extends Error {}

/** What the server listens with when mutual TLS is on: its key pair and the CAs a client must chain to. */
export class MutualTls {
  constructor(
    readonly cert: Buffer,
    readonly key: Buffer,
    readonly ca: Buffer,
    readonly roots: readonly X509Certificate[],
  ) {}
}

/** --insecure: grpc-js's plaintext credentials; otherwise mutual TLS served by `listenMutualTls`. */
export type FunctionCredentials = ServerCredentials | MutualTls;

export function serverCredentials(options: {
  insecure: boolean;
  tlsCertsDir: string | undefined;
}): FunctionCredentials {
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
  const ca = read('ca.crt');
  const cert = read('tls.crt');
  const key = read('tls.key');
  const roots = parseCertificates(ca, join(dir, 'ca.crt'));
  try {
    // Fails now, naming the files, rather than at the first connection.
    createSecureContext({ cert, key, ca });
  } catch (err) {
    throw new CredentialsError(`unusable ${join(dir, 'tls.crt')} / tls.key: ${(err as Error).message}`);
  }
  return new MutualTls(cert, key, ca, roots);
}

/** Every PEM certificate in a file; none, or one that does not parse, is an error naming the file. */
function parseCertificates(pem: Buffer, file: string): X509Certificate[] {
  const blocks = pem.toString('utf8').match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new CredentialsError(`${file}: no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  return blocks.map((block, i) => {
    try {
      return new X509Certificate(block);
    } catch (err) {
      throw new CredentialsError(`${file}: certificate ${i + 1} does not parse: ${(err as Error).message}`);
    }
  });
}

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const ANY_EXTENDED_KEY_USAGE = '2.5.29.37.0';

/** Go's limit on chain length is looser; four intermediates is more than any Crossplane setup uses. */
const MAX_INTERMEDIATES = 4;

const nameOf = (cert: X509Certificate): string => shown(cert.subject.replace(/\n/g, ', '));
const issuedBy = (cert: X509Certificate, issuer: X509Certificate): boolean =>
  cert.checkIssued(issuer) && cert.verify(issuer.publicKey);

/** Why `cert` cannot stand in a client's chain at `now` (validity, extended key usage), or null. */
function unusable(cert: X509Certificate, name: string, now: number): string | null {
  if (!(now >= Date.parse(cert.validFrom))) return `${name} is not valid yet (from ${cert.validFrom})`;
  if (!(now <= Date.parse(cert.validTo))) return `${name} has expired (valid until ${cert.validTo})`;
  const usages = cert.keyUsage as string[] | undefined;
  if (usages && usages.length > 0 && !usages.includes(CLIENT_AUTH) && !usages.includes(ANY_EXTENDED_KEY_USAGE)) {
    return `${name} is not for client authentication (extendedKeyUsage ${usages.join(', ')})`;
  }
  return null;
}

/**
 * Why Go's crypto/tls (ClientAuth RequireAndVerifyClientCert, ClientCAs = ca.crt) would refuse this client
 * certificate, or null when it accepts it: a chain from it, through CA certificates the client sent after it
 * (`intermediates`) if need be, to a CA certificate of ca.crt, each signed by the next, every one within its
 * validity at `now` and usable for client authentication (an extended key usage list, when present, holds
 * clientAuth or anyExtendedKeyUsage; none means any use). Names are matched as OpenSSL's X509_check_issued
 * does (issuer name, and the authority key identifier only when there is one), so a certificate that carries
 * its CA's own subject is judged by its signature, as Go judges it. Not checked (nor used by Crossplane): path
 * length and name constraints.
 */
export function clientCertificateProblem(
  leaf: X509Certificate | undefined,
  roots: readonly X509Certificate[],
  now: number,
  intermediates: readonly X509Certificate[] = [],
): string | null {
  if (!leaf) return 'the client sent no certificate (mutual TLS: one signed by ca.crt is required)';
  const what = `client certificate ${nameOf(leaf)}`;
  const own = unusable(leaf, what, now);
  if (own) return own;
  // The most specific reason a candidate issuer was turned down, for the message when no chain is found.
  let rejected: string | null = null;
  const consider = (issuer: X509Certificate, role: string): boolean => {
    rejected = issuer.ca
      ? unusable(issuer, `${role} ${nameOf(issuer)}`, now)
      : `${what} is signed by ${role} ${nameOf(issuer)}, which is not a CA (basicConstraints CA:FALSE)`;
    return rejected === null;
  };
  const chains = (cert: X509Certificate, path: readonly X509Certificate[]): boolean =>
    roots.some((ca) => issuedBy(cert, ca) && consider(ca, 'its CA')) ||
    (path.length < MAX_INTERMEDIATES &&
      intermediates.some(
        (mid) =>
          !path.includes(mid) &&
          issuedBy(cert, mid) &&
          consider(mid, 'the intermediate CA') &&
          chains(mid, [...path, mid]),
      ));
  if (chains(leaf, [])) return null;
  return rejected ?? `${what} (issuer ${shown(leaf.issuer.replace(/\n/g, ', '))}) is not signed by a CA of ca.crt`;
}

/**
 * The peer's certificate and those it sent after it, as Node links them issuer by issuer (without a verdict).
 * Read through getPeerCertificate(true) alone: once getPeerX509Certificate() has run on a server socket,
 * Node (20) no longer links the sent certificates.
 */
function peerCertificates(socket: TLSSocket): { leaf: X509Certificate | undefined; sent: X509Certificate[] } {
  const chain: X509Certificate[] = [];
  const seen = new Set<string>();
  let cert: DetailedPeerCertificate | undefined = socket.getPeerCertificate(true);
  while (cert?.raw && !seen.has(cert.fingerprint256)) {
    seen.add(cert.fingerprint256);
    chain.push(new X509Certificate(cert.raw));
    // Typed as always present; it is absent beyond the last certificate Node could link.
    cert = cert.issuerCertificate;
  }
  return { leaf: chain[0], sent: chain.slice(1) };
}

export interface MutualTlsListener {
  port: number;
  /** Stops accepting connections and ends those not handed on (still in their handshake). */
  close(): void;
}

/**
 * A TLS listener that requests the client's certificate, checks it with `clientCertificateProblem` and hands
 * only accepted connections to `accept` (grpc-js's connection injector); a refused one is closed before any
 * HTTP/2 frame is read, so no call, health check included, reaches a handler without a verified client.
 */
export async function listenMutualTls(
  creds: MutualTls,
  listen: { host: string; port: number },
  hooks: {
    accept: (socket: TLSSocket) => void;
    refused: (problem: string, remote: string | undefined) => void;
    handshakeFailed: (error: Error, remote: string | undefined) => void;
    now: () => number;
  },
): Promise<MutualTlsListener> {
  // Raw connections whose handshake has not finished, by peer address: closed with the listener.
  const handshaking = new Map<string, Socket>();
  const peer = (s: Socket): string => `${s.remoteAddress}|${s.remotePort}`;
  const server: TlsServer = createServer({
    cert: creds.cert,
    key: creds.key,
    ca: creds.ca,
    requestCert: true,
    // OpenSSL's chain verdict is ignored on purpose (see the top of this file); the check is ours.
    rejectUnauthorized: false,
    ALPNProtocols: ['h2'],
    minVersion: 'TLSv1.2',
    handshakeTimeout: 10_000,
  });
  server.on('connection', (socket: Socket) => {
    const key = peer(socket);
    handshaking.set(key, socket);
    socket.once('close', () => handshaking.delete(key));
  });
  server.on('secureConnection', (socket: TLSSocket) => {
    handshaking.delete(peer(socket));
    const { leaf, sent } = peerCertificates(socket);
    const problem = clientCertificateProblem(leaf, creds.roots, hooks.now(), sent);
    if (problem !== null) {
      hooks.refused(problem, socket.remoteAddress);
      socket.destroy();
      return;
    }
    hooks.accept(socket);
  });
  server.on('tlsClientError', (err, socket) => hooks.handshakeFailed(err, socket.remoteAddress));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : listen.port,
    close() {
      server.close();
      for (const socket of handshaking.values()) socket.destroy();
    },
  };
}
