import { describe, expect, it } from '@jest/globals';
import { ExtenderTlsSettingsError, extenderTlsSettingsFromEnv } from './extender-tls-server.js';

describe('extenderTlsSettingsFromEnv', () => {
  const files = { QM_EXTENDER_TLS_CERT_FILE: '/tls/tls.crt', QM_EXTENDER_TLS_KEY_FILE: '/tls/tls.key', QM_EXTENDER_TLS_CLIENT_CA_FILE: '/tls/ca.crt' };

  it('is off when none of its files is set', () => {
    expect(extenderTlsSettingsFromEnv({})).toBeNull();
  });

  it('reads the three files and the port (default 8443)', () => {
    expect(extenderTlsSettingsFromEnv(files)).toEqual({ port: 8443, certFile: '/tls/tls.crt', keyFile: '/tls/tls.key', clientCaFile: '/tls/ca.crt' });
    expect(extenderTlsSettingsFromEnv({ ...files, QM_EXTENDER_TLS_PORT: '9443' })?.port).toBe(9443);
  });

  it('refuses a partial configuration, naming what is missing, and a bad port', () => {
    expect(() => extenderTlsSettingsFromEnv({ QM_EXTENDER_TLS_CERT_FILE: '/tls/tls.crt' })).toThrow(ExtenderTlsSettingsError);
    expect(() => extenderTlsSettingsFromEnv({ QM_EXTENDER_TLS_CERT_FILE: '/tls/tls.crt' })).toThrow('missing QM_EXTENDER_TLS_KEY_FILE, QM_EXTENDER_TLS_CLIENT_CA_FILE');
    expect(() => extenderTlsSettingsFromEnv({ ...files, QM_EXTENDER_TLS_PORT: '70000' })).toThrow('QM_EXTENDER_TLS_PORT=70000 must be a port');
  });
});
