import { describe, expect, it } from 'vitest';
import { shownDatabase } from '../../src/config/index.js';

describe('shownDatabase: a database URL as the banner and the logs show it', () => {
  it('masks the password of the user part', () => {
    expect(shownDatabase('postgres://sandbox:s3cret@db:5432/sandbox')).toBe('postgres://sandbox:****@db:5432/sandbox');
  });

  it('masks a password given as a query parameter, as node-postgres also reads it, and keeps the other parameters', () => {
    const shown = shownDatabase('postgres://sandbox@db/sandbox?password=s3cret&sslmode=require&sslpassword=k3y');
    expect(shown).not.toContain('s3cret');
    expect(shown).not.toContain('k3y');
    expect(shown).toContain('sslmode=require');
  });

  it('shows a URL with no host (a Unix socket named by its host parameter) masked, as node-postgres reads it', () => {
    expect(shownDatabase('postgres://sandbox:s3cret@/sandbox?host=%2Fvar%2Frun%2Fpostgresql')).toBe('postgres://sandbox:****@/sandbox?host=%2Fvar%2Frun%2Fpostgresql');
    expect(shownDatabase('postgresql://sandbox@/sandbox?host=/var/run/postgresql&password=s3cret')).not.toContain('s3cret');
  });

  it('says so, rather than echoing it, for a URL it cannot parse', () => {
    expect(shownDatabase('not a url with s3cret')).toBe('postgres://(unparsable URL)');
  });
});
