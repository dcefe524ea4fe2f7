import { createHmac, timingSafeEqual } from 'node:crypto';

const PREFIX = '/__sandbox/pod/';
const SUFFIX = '.png';

/**
 * The addresses of proof-of-delivery photos. A photo needs no token (a client's app shows
 * it as an image), so its name carries a tag only the sandbox can make: the AWB's HMAC
 * under a random secret kept in the store (meta `pod_secret`, made once, shared by
 * replicas, never shown; not `--seed`, which partners may know or guess). Without it, anyone could ask for `<awb>.png` and learn from
 * 200 or 404 whether another partner's AWB exists and was delivered (DESIGN: another
 * client's AWBs are 404, exactly as if they did not exist). The magic AWBs, the same for
 * every client, are served under their plain name too.
 *
 * @example
 * const photos = new PodPhotos('secret', () => false);
 * photos.url('http://127.0.0.1:4010', '/__sandbox/pod/JN0000000001.png'); // 'http://127.0.0.1:4010/__sandbox/pod/JN0000000001-1f0c….png'
 * photos.awbOf('JN0000000001-1f0c….png'); // 'JN0000000001'
 */
export class PodPhotos {
  constructor(
    private readonly secret: string,
    private readonly isMagic: (awb: string) => boolean,
  ) {}

  /** The absolute URL of a photo path as a history holds it (`/__sandbox/pod/<awb>.png`), named with its tag. */
  url(baseUrl: string, path: string): string {
    if (!path.startsWith(PREFIX) || !path.endsWith(SUFFIX)) return `${baseUrl}${path}`;
    let awb: string;
    try {
      awb = decodeURIComponent(path.slice(PREFIX.length, -SUFFIX.length));
    } catch {
      return `${baseUrl}${path}`;
    }
    return `${baseUrl}${PREFIX}${encodeURIComponent(awb)}-${this.tag(awb)}${SUFFIX}`;
  }

  /** The AWB a photo's file name names, when its tag is the AWB's (or it is a magic AWB's plain name); else undefined. */
  awbOf(file: string): string | undefined {
    if (!file.endsWith(SUFFIX)) return undefined;
    const name = file.slice(0, -SUFFIX.length);
    if (this.isMagic(name)) return name;
    const dash = name.lastIndexOf('-');
    if (dash <= 0) return undefined;
    const awb = name.slice(0, dash);
    const given = Buffer.from(name.slice(dash + 1));
    const expected = Buffer.from(this.tag(awb));
    return given.length === expected.length && timingSafeEqual(given, expected) ? awb : undefined;
  }

  private tag(awb: string): string {
    return createHmac('sha256', this.secret).update(`pod-photo:${awb}`).digest('hex').slice(0, 20);
  }
}
