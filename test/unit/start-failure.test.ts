import { describe, expect, it } from 'vitest';
import { listenFailure, startFailure } from '../../src/config/index.js';

const failed = (message: string, code: string, syscall: string) => Object.assign(new Error(message), { code, syscall });

describe("a start's failure, as the CLI prints it", () => {
  it('says what to do about a port in use, a port this user may not take, and a host that is not this machine', () => {
    expect(startFailure(failed('listen EADDRINUSE: address already in use 127.0.0.1:4010', 'EADDRINUSE', 'listen'))).toBe(
      'listen EADDRINUSE: address already in use 127.0.0.1:4010. Another process listens there: stop it, or start this sandbox with another --port (PORT; 0 picks a free one).',
    );
    expect(startFailure(failed('listen EACCES: permission denied 0.0.0.0:80', 'EACCES', 'listen'))).toBe('listen EACCES: permission denied 0.0.0.0:80. This user may not listen on that port: use one above 1023 (--port, PORT).');
    expect(startFailure(failed('listen EADDRNOTAVAIL: address not available 10.9.9.9:4010', 'EADDRNOTAVAIL', 'listen'))).toMatch(/^listen EADDRNOTAVAIL: address not available 10\.9\.9\.9:4010\. No interface of this machine has that address: .*\(--host, HOST\)\.$/);
  });

  it("says what to do about a host name that does not resolve, when the listen's look-up failed; not when another look-up did (a database's host)", () => {
    const lookup = () => failed('getaddrinfo ENOTFOUND nonexistent.invalid', 'ENOTFOUND', 'getaddrinfo');
    expect(startFailure(listenFailure(lookup()))).toBe(
      'getaddrinfo ENOTFOUND nonexistent.invalid. That host is no address and no name this machine resolves: use 127.0.0.1, or 0.0.0.0 for every interface (--host, HOST).',
    );
    expect(startFailure(lookup())).toBe('getaddrinfo ENOTFOUND nonexistent.invalid');
  });

  it('adds no port advice to a data file or folder the user may not write (EACCES too, from the file system)', () => {
    expect(startFailure(failed("EACCES: permission denied, lstat '/data/sandbox.json'", 'EACCES', 'lstat'))).toBe("EACCES: permission denied, lstat '/data/sandbox.json'");
    expect(startFailure(new Error('The data file /data/sandbox.json is not valid JSON.'))).toBe('The data file /data/sandbox.json is not valid JSON.');
  });
});
