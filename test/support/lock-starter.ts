// A starter for the lock race test: says `ready`, waits for `<data>.go`, tries to take
// the lock, prints `won` or the error's name. A winner holds the lock until `<data>.done`
// appears, then exits without releasing it, as a SIGKILL would leave it.
import { existsSync } from 'node:fs';
import { DataFileLock } from '../../src/store/embedded/file/lock.js';

const data = process.argv[2]!;
const until = async (file: string) => {
  while (!existsSync(file)) await new Promise((r) => setTimeout(r, 10));
};
const giveUp = setTimeout(() => process.exit(2), 30_000);
console.log('ready');
await until(`${data}.go`);
try {
  DataFileLock.acquire(data);
  console.log('won');
  await until(`${data}.done`);
} catch (error) {
  console.log((error as Error).name);
}
clearTimeout(giveUp);
