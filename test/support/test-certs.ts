import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Throwaway certificates made with openssl in a temp directory (P-256 keys, valid two days). */
export class TestCerts {
  readonly dir = mkdtempSync(join(tmpdir(), 'qm-test-certs-'));

  /** Path of `<name>.crt`, `<name>.key`, … in the directory. */
  file(name: string): string {
    return join(this.dir, name);
  }

  /** A self-signed CA: `<name>.crt` and `<name>.key`. */
  ca(name: string): void {
    this.openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.crt`, '-subj', `/CN=${name}`, '-days', '2');
  }

  /** A certificate `ca` signs, for `usage` (serverAuth with `san`, e.g. `IP:127.0.0.1`, or clientAuth). */
  cert(name: string, ca: string, usage: 'serverAuth' | 'clientAuth', san?: string): void {
    this.openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`);
    writeFileSync(this.file(`${name}.ext`), [`extendedKeyUsage=${usage}`, ...(san ? [`subjectAltName=${san}`] : [])].join('\n'));
    this.openssl('x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-out', `${name}.crt`, '-days', '2', '-extfile', `${name}.ext`);
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  private openssl(...args: string[]): void {
    execFileSync('openssl', args, { cwd: this.dir, stdio: 'pipe' });
  }
}
