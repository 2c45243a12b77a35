// Mutual TLS as Crossplane's Go function SDK does it, through a real gRPC client over loopback: the client
// certificate `crossplane core init` issues (its CA's subject, no authority key identifier: OpenSSL alone
// calls it self-signed) is accepted; no certificate, another CA's, an expired one, one self-signed with the
// CA's name, and one not meant for client authentication are refused before any handler runs.
import { execFileSync, spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials, status, type ServiceError } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { functionClient } from './client.js';
import { WORKED_EXAMPLE } from './fixtures.js';
import { HealthCheckResponse_ServingStatus as Serving } from './generated/grpc/health/v1/health.js';
import { planRequest } from './request.js';
import { startFunctionServer, type FunctionServer } from './server.js';
import { clientCertificateProblem, CredentialsError, serverCredentials } from './tls.js';

/** Crossplane's CA subject, which init also gives the client certificate. */
const CA_SUBJECT = '/O=Crossplane/CN=crossplane-root-ca';

let dir: string;
let server: FunctionServer;
const logLines: Record<string, unknown>[] = [];
const file = (name: string): Buffer => readFileSync(join(dir, name));
let serial = 100;
const ssl = (...args: string[]): string => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' }).toString();

/**
 * `name`.key (P-256, quick to make) and `name`.crt with `subject` and exactly the extensions `ext`, signed by
 * `issuer`'s key or, when null, by its own; `dates` (openssl ca's YYYYMMDDHHMMSSZ) places its validity,
 * otherwise it is valid for two days from now.
 */
function makeCert(name: string, subject: string, ext: string, issuer: string | null, dates?: [string, string]): void {
  const curve = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  ssl('req', '-new', ...curve, '-subj', subject, '-keyout', `${name}.key`, '-out', `${name}.csr`);
  writeFileSync(join(dir, `${name}.ext`), ext);
  const out = ['-in', `${name}.csr`, '-extfile', `${name}.ext`, '-out', `${name}.crt`];
  const signer = issuer === null ? ['-key', `${name}.key`] : ['-CA', `${issuer}.crt`, '-CAkey', `${issuer}.key`];
  if (!dates) {
    ssl('x509', '-req', ...signer, '-set_serial', String(serial++), '-days', '2', ...out);
    return;
  }
  // `openssl x509` (3.0) cannot date a certificate in the past; `openssl ca` can.
  writeFileSync(join(dir, 'index.txt'), '');
  writeFileSync(join(dir, 'serial'), '1000\n');
  writeFileSync(
    join(dir, 'ca.cnf'),
    '[ca]\ndefault_ca = d\n[d]\ndatabase = index.txt\nnew_certs_dir = .\nserial = serial\ndefault_md = sha256\n' +
      'policy = p\npreserve = yes\nunique_subject = no\n[p]\norganizationName = optional\ncommonName = supplied\n',
  );
  const ca = ['-cert', `${String(issuer)}.crt`, '-keyfile', `${String(issuer)}.key`];
  ssl('ca', '-batch', '-notext', '-config', 'ca.cnf', ...ca, '-startdate', dates[0], '-enddate', dates[1], ...out);
}

// Go gives a CA certificate a subject key identifier; OpenSSL 3 adds one (and an authority key identifier)
// unless told otherwise.
const CA_EXT =
  'basicConstraints = critical, CA:TRUE\nkeyUsage = critical, keyCertSign, cRLSign\nsubjectKeyIdentifier = hash\n';
// What init gives Crossplane's client certificate: its CA's subject, clientAuth, no key identifiers.
const CROSSPLANE_CLIENT_EXT =
  'basicConstraints = critical, CA:FALSE\nkeyUsage = critical, digitalSignature, keyEncipherment, dataEncipherment\n' +
  'extendedKeyUsage = clientAuth\nsubjectAltName = DNS:crossplane.crossplane-system\n' +
  'subjectKeyIdentifier = none\nauthorityKeyIdentifier = none\n';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fn-mtls-'));
  makeCert('ca', CA_SUBJECT, CA_EXT, null);
  // Another CA with the very same name: only the signature tells them apart.
  makeCert('other-ca', CA_SUBJECT, CA_EXT, null);
  makeCert(
    'server',
    '/CN=function-noderotation',
    'extendedKeyUsage = serverAuth\nsubjectAltName = DNS:localhost, IP:127.0.0.1\n',
    'ca',
  );
  makeCert('crossplane', CA_SUBJECT, CROSSPLANE_CLIENT_EXT, 'ca');
  // An intermediate CA, and a client certificate it issued, sent with the intermediate after it.
  makeCert('mid', '/CN=intermediate', CA_EXT, 'ca');
  makeCert('via-mid', '/CN=via-intermediate', 'extendedKeyUsage = clientAuth\n', 'mid');
  writeFileSync(join(dir, 'via-mid-chain.crt'), Buffer.concat([file('via-mid.crt'), file('mid.crt')]));
  makeCert('no-eku', '/CN=no-extended-key-usage', 'basicConstraints = CA:FALSE\n', 'ca');
  makeCert('other', CA_SUBJECT, CROSSPLANE_CLIENT_EXT, 'other-ca');
  makeCert('expired', CA_SUBJECT, CROSSPLANE_CLIENT_EXT, 'ca', ['20200101000000Z', '20200102000000Z']);
  makeCert('server-only', '/CN=server-only', 'extendedKeyUsage = serverAuth\n', 'ca');
  // Self-signed with the CA's name and Crossplane's extensions, by a key nobody trusts.
  makeCert('impostor', CA_SUBJECT, CROSSPLANE_CLIENT_EXT, null);
  const certs = join(dir, 'server-certs');
  execFileSync('mkdir', ['-p', certs]);
  writeFileSync(join(certs, 'tls.crt'), file('server.crt'));
  writeFileSync(join(certs, 'tls.key'), file('server.key'));
  writeFileSync(join(certs, 'ca.crt'), file('ca.crt'));
  server = await startFunctionServer({
    address: '127.0.0.1:0',
    credentials: serverCredentials({ insecure: false, tlsCertsDir: certs }),
    metricsAddress: null,
    log: (level, msg, fields = {}) => logLines.push({ level, msg, ...fields }),
    now: () => Date.parse('2027-01-04T00:00:00Z'),
  });
}, 60_000);

afterAll(async () => {
  await server?.shutdown(1000);
  rmSync(dir, { recursive: true, force: true });
});

/** A RunFunction call and a health check with the client certificate `name` (or none): answers or errors. */
async function callAs(name: string | null, chain = `${name}.crt`): Promise<{ run: unknown; health: unknown }> {
  const creds = name
    ? credentials.createSsl(file('ca.crt'), file(`${name}.key`), file(chain))
    : credentials.createSsl(file('ca.crt'));
  const client = functionClient(`127.0.0.1:${server.port}`, creds);
  const settle = async <T>(p: Promise<T>): Promise<T | ServiceError> => p.catch((err: ServiceError) => err);
  try {
    const req = planRequest({ composite: WORKED_EXAMPLE.xr, nodePools: WORKED_EXAMPLE.pools });
    return { run: await settle(client.runFunction(req, 5000)), health: await settle(client.check()) };
  } finally {
    client.close();
  }
}

describe('the certificate crossplane core init issues', () => {
  it('is one OpenSSL itself rejects as self-signed (the reason for our own check)', () => {
    const cert = new X509Certificate(file('crossplane.crt'));
    expect(cert.subject).toBe(cert.issuer);
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    expect(ssl('x509', '-in', 'crossplane.crt', '-noout', '-text')).not.toMatch(/Key Identifier/);
    const verdict = spawnSync('openssl', ['verify', '-CAfile', 'ca.crt', 'crossplane.crt'], { cwd: dir });
    expect(verdict.status).not.toBe(0);
    expect(verdict.stdout.toString() + verdict.stderr.toString()).toMatch(/error 18 .*self-signed certificate/);
  });

  it('is accepted: RunFunction answers and health says SERVING', async () => {
    const { run, health } = await callAs('crossplane');
    expect(run).toMatchObject({ results: [], desired: { resources: { 'rotationpolicy-general': {} } } });
    expect(health).toMatchObject({ status: Serving.SERVING });
  });
});

describe('Go accepts it, so do we', () => {
  it('a certificate with no extended key usage (valid for any use, as in Go)', async () => {
    const { run } = await callAs('no-eku');
    expect(run).toMatchObject({ results: [] });
  });

  it('a certificate issued by an intermediate CA that the client sends after it', async () => {
    const { run } = await callAs('via-mid', 'via-mid-chain.crt');
    expect(run).toMatchObject({ results: [] });
  });
});

interface Refusal {
  reason: string;
  client: string | null;
  problem: RegExp;
}

const refusals: Refusal[] = [
  { reason: 'no client certificate', client: null, problem: /sent no certificate/ },
  {
    reason: 'a certificate from another CA with the same name',
    client: 'other',
    problem: /is not signed by a CA of ca\.crt/,
  },
  { reason: 'an expired certificate', client: 'expired', problem: /has expired \(valid until Jan {2}2 00:00:00 2020/ },
  {
    reason: "a certificate self-signed with the CA's name by an unknown key",
    client: 'impostor',
    problem: /is not signed by a CA of ca\.crt/,
  },
  {
    reason: 'a certificate issued by an intermediate CA that the client does not send',
    client: 'via-mid',
    problem: /"CN=via-intermediate" \(issuer "CN=intermediate"\) is not signed by a CA of ca\.crt/,
  },
  {
    reason: 'a certificate for server authentication only',
    client: 'server-only',
    problem: /not for client authentication \(extendedKeyUsage 1\.3\.6\.1\.5\.5\.7\.3\.1\)/,
  },
];

describe('refused before any handler, health included, and logged', () => {
  it('a plaintext client (the TLS handshake fails: logged at debug only)', async () => {
    const client = functionClient(`127.0.0.1:${server.port}`);
    try {
      await expect(client.check()).rejects.toMatchObject({ code: status.UNAVAILABLE });
    } finally {
      client.close();
    }
  });

  it.each(refusals)('$reason', async ({ client, problem }) => {
    const before = logLines.length;
    const { run, health } = await callAs(client);
    expect(run).toMatchObject({ code: status.UNAVAILABLE });
    expect(health).toMatchObject({ code: status.UNAVAILABLE });
    const refused = logLines.slice(before).filter((l) => l.msg === 'TLS client refused');
    expect(refused.length).toBeGreaterThan(0);
    for (const line of refused) {
      expect(line).toMatchObject({ level: 'warn', problem: expect.stringMatching(problem) as unknown });
    }
    // No call got through to be logged as one.
    expect(logLines.slice(before).filter((l) => String(l.msg).startsWith('RunFunction'))).toEqual([]);
  });
});

describe('clientCertificateProblem', () => {
  const roots = (): X509Certificate[] => [new X509Certificate(file('ca.crt'))];
  const crossplane = (): X509Certificate => new X509Certificate(file('crossplane.crt'));

  it('judges validity by the instant it is given', () => {
    const cert = crossplane();
    expect(clientCertificateProblem(cert, roots(), Date.parse(cert.validFrom) + 1000)).toBeNull();
    expect(clientCertificateProblem(cert, roots(), Date.parse(cert.validFrom) - 1000)).toMatch(/is not valid yet/);
    expect(clientCertificateProblem(cert, roots(), Date.parse(cert.validTo) + 1000)).toMatch(/has expired/);
  });

  it('refuses a certificate issued by a certificate of ca.crt that is no CA', () => {
    // Signed with the key of a certificate that is CA:FALSE (and has no keyUsage to say so), which ca.crt holds.
    makeCert('by-leaf', '/CN=by-leaf', 'extendedKeyUsage = clientAuth\n', 'no-eku');
    const leaf = new X509Certificate(file('by-leaf.crt'));
    const notCa = new X509Certificate(file('no-eku.crt'));
    expect(clientCertificateProblem(leaf, [notCa], Date.now())).toMatch(
      /is signed by its CA "CN=no-extended-key-usage", which is not a CA/,
    );
  });

  it('refuses an intermediate that is no CA, and an expired intermediate', () => {
    const leaf = new X509Certificate(file('by-leaf.crt'));
    const notCa = new X509Certificate(file('no-eku.crt'));
    expect(clientCertificateProblem(leaf, roots(), Date.now(), [notCa])).toMatch(
      /signed by the intermediate CA "CN=no-extended-key-usage", which is not a CA/,
    );
    const viaMid = new X509Certificate(file('via-mid.crt'));
    const mid = new X509Certificate(file('mid.crt'));
    expect(clientCertificateProblem(viaMid, roots(), Date.now(), [mid])).toBeNull();
    makeCert('old-mid', '/CN=old-intermediate', CA_EXT, 'ca', ['20200101000000Z', '20200102000000Z']);
    makeCert('via-old-mid', '/CN=via-old-intermediate', 'extendedKeyUsage = clientAuth\n', 'old-mid');
    const oldMid = new X509Certificate(file('old-mid.crt'));
    const viaOldMid = new X509Certificate(file('via-old-mid.crt'));
    expect(clientCertificateProblem(viaOldMid, roots(), Date.now(), [oldMid])).toMatch(
      /the intermediate CA "CN=old-intermediate" has expired/,
    );
  });

  it('accepts an issuer found among several certificates of ca.crt', () => {
    const all = [new X509Certificate(file('other-ca.crt')), ...roots()];
    expect(clientCertificateProblem(crossplane(), all, Date.now())).toBeNull();
  });
});

describe('loading the certificates', () => {
  it('refuses to start with neither certificates nor --insecure, and names a missing file', () => {
    expect(() => serverCredentials({ insecure: false, tlsCertsDir: undefined })).toThrow(
      /no TLS certificates: pass --tls-certs-dir/,
    );
    expect(() => serverCredentials({ insecure: false, tlsCertsDir: join(dir, 'missing') })).toThrow(
      /cannot read .*missing\/ca\.crt/,
    );
  });

  it('names a ca.crt without a certificate, and an unusable key pair', () => {
    const bad = join(dir, 'bad-certs');
    execFileSync('mkdir', ['-p', bad]);
    writeFileSync(join(bad, 'tls.crt'), file('server.crt'));
    writeFileSync(join(bad, 'tls.key'), file('server.key'));
    writeFileSync(join(bad, 'ca.crt'), 'not a certificate\n');
    expect(() => serverCredentials({ insecure: false, tlsCertsDir: bad })).toThrow(
      new CredentialsError(`${join(bad, 'ca.crt')}: no PEM certificate (-----BEGIN CERTIFICATE-----)`),
    );
    writeFileSync(join(bad, 'ca.crt'), file('ca.crt'));
    writeFileSync(join(bad, 'tls.key'), file('crossplane.key'));
    expect(() => serverCredentials({ insecure: false, tlsCertsDir: bad })).toThrow(/unusable .*tls\.crt \/ tls\.key/);
  });
});
