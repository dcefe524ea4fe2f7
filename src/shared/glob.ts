/**
 * Path globs (fault rules, request counts), matched in time linear in the path: `*` matches a run of
 * characters within one segment, `?` one character of a segment, a segment `**` any
 * number of whole segments (none included); every other character is literal. A segment
 * with `**` among other characters takes it as `*`. A trailing slash on the path is ignored.
 *
 * The glob is compiled once into a chain of states, one per glob character (and two more
 * per `**`), and the path is run through all of them at once as bits of 32-bit words
 * (Shift-And, extended with self-loops and the empty steps of the stars). A path of n
 * characters then costs n × (states / 32) word steps, whatever the glob, so no glob a
 * client writes can make matching a long path stall the event loop (a backtracking
 * matcher costs n × glob length per segment).
 *
 * @example
 * const glob = compileGlob('/v1/order/tracking/*');
 * glob.matches('/v1/order/tracking/SBX1'); // true
 * glob.matches('/v1/order/tracking/SBX1/x'); // false
 */
export interface CompiledGlob {
  matches(path: string): boolean;
  /** About how much memory its masks hold. */
  readonly bytes: number;
}

const SLASH = 47; // '/'

type Token = { kind: 'char'; code: number } | { kind: 'any' } | { kind: 'star' } | { kind: 'slash' } | { kind: 'segments' };

/**
 * The glob as tokens over the path with a '/' added at its end: each segment's characters
 * then a slash; `**` as one token (consecutive ones are one).
 */
function tokensOf(glob: string): Token[] {
  const tokens: Token[] = [];
  for (const raw of glob.split('/')) {
    if (raw === '**') {
      if (tokens.at(-1)?.kind !== 'segments') tokens.push({ kind: 'segments' });
      continue;
    }
    const segment = raw.replace(/\*+/g, '*');
    for (let i = 0; i < segment.length; i++) {
      const code = segment.charCodeAt(i);
      tokens.push(code === 42 ? { kind: 'star' } : code === 63 ? { kind: 'any' } : { kind: 'char', code });
    }
    tokens.push({ kind: 'slash' });
  }
  return tokens;
}

const setBit = (mask: Int32Array, bit: number): void => {
  mask[bit >>> 5]! |= 1 << (bit & 31);
};

/**
 * Compiles a path glob. States: 0 before anything; each token one state, entered when the
 * token is done; `**` two: B (the segments it takes: entered with no character from the
 * state before it, A, and looping on any character) and C (entered from B by a '/', so
 * what `**` took ends a segment), with an empty step from A to C for `**` taking no
 * segment. The match holds when the last state is reached at the end of the path with
 * its '/' added.
 */
export function compileGlob(glob: string): CompiledGlob {
  const tokens = tokensOf(glob);
  let states = 1;
  for (const token of tokens) states += token.kind === 'segments' ? 2 : 1;
  const words = Math.ceil(states / 32);
  /** A bit mask over the chain of states, as 32-bit words. */
  const mask = (): Int32Array => new Int32Array(words);
  /** States entered from the one before by a character of each kind. */
  const byChar = new Map<number, Int32Array>();
  const bySlash = mask();
  const byOther = mask();
  /** States that loop on a character: stars on any but '/', `**`'s B on any. */
  const loopOther = mask();
  const loopSlash = mask();
  /** Stars: entered with no character from the state before. */
  const stars = mask();
  /** `**`'s A: its C (two on) is entered with no character. */
  const skips = mask();
  /** Literal characters' states by character, and the states of '?'. */
  const literal: Array<[number, number]> = [];
  const anyStates: number[] = [];
  let state = 0;
  for (const token of tokens) {
    switch (token.kind) {
      case 'char':
        state += 1;
        literal.push([token.code, state]);
        break;
      case 'any':
        state += 1;
        setBit(byOther, state);
        anyStates.push(state);
        break;
      case 'star':
        state += 1;
        setBit(stars, state);
        setBit(loopOther, state);
        break;
      case 'slash':
        state += 1;
        setBit(bySlash, state);
        break;
      case 'segments':
        setBit(skips, state);
        state += 1; // B: entered with no character, as a star is, and loops on any, '/' included
        setBit(stars, state);
        setBit(loopSlash, state);
        setBit(loopOther, state);
        state += 1; // C: B's run of characters ended with a '/'
        setBit(bySlash, state);
        break;
    }
  }
  // '?' takes every character but '/': each literal character's mask has the '?' states too.
  for (const [code, s] of literal) {
    let entered = byChar.get(code);
    if (!entered) {
      entered = mask();
      for (const any of anyStates) setBit(entered, any);
      byChar.set(code, entered);
    }
    setBit(entered, s);
  }
  const last = states - 1;

  return {
    bytes: (byChar.size + 6) * words * 4 + 200,
    matches(path: string): boolean {
      const end = path.length > 1 && path.charCodeAt(path.length - 1) === SLASH ? path.length - 1 : path.length;
      let d = mask();
      let next = mask();
      // State 0, and what it reaches with no character (a glob not starting with '/' may start with a star).
      d[0] = 1 | ((1 & skips[0]!) << 2);
      d[0] |= (d[0]! << 1) & stars[0]!;
      // The path's characters, then the '/' added at its end; one pass over the words per
      // character, lowest first, so the empty steps (A to C two states on, then into a
      // star or `**`'s B) carry into the next word from this character's bits.
      for (let i = 0; i <= end; i++) {
        const code = i === end ? SLASH : path.charCodeAt(i);
        const enter = code === SLASH ? bySlash : (byChar.get(code) ?? byOther);
        const loop = code === SLASH ? loopSlash : loopOther;
        let alive = 0;
        let before = 0; // the word below's old bits
        let below = 0; // the word below's new bits
        for (let w = 0; w < words; w++) {
          const old = d[w]!;
          let n = (((old << 1) | (before >>> 31)) & enter[w]!) | (old & loop[w]!);
          n |= ((n & skips[w]!) << 2) | ((below & (w > 0 ? skips[w - 1]! : 0)) >>> 30);
          n |= ((n << 1) | (below >>> 31)) & stars[w]!;
          next[w] = n;
          alive |= n;
          before = old;
          below = n;
        }
        if (alive === 0) return false;
        const swap = d;
        d = next;
        next = swap;
      }
      return (d[last >>> 5]! & (1 << (last & 31))) !== 0;
    },
  };
}

/** Compiled globs by their text: fault rules are matched against every request of their client. */
const compiled = new Map<string, CompiledGlob>();
let compiledBytes = 0;
/**
 * Most memory the compiled globs hold; past it the cache starts again. A glob of 500
 * printable ASCII characters holds at most ~6.5 KB of masks, so this keeps ~2,500 of them
 * (25 clients' 100 fault rules each); globs sent in a loop (rules, request counts) hold no more.
 */
const COMPILED_MAX_BYTES = 16 * 1024 * 1024;

/**
 * Whether a request path matches a path glob: `*` matches within one segment, `?` one
 * character, a segment `**` any number of segments; everything else is literal. A
 * trailing slash on the path is ignored. Linear in the path (see `compileGlob`), so no
 * glob a client sends can stall the server.
 *
 * @example globMatches('/v1/order/tracking/*', '/v1/order/tracking/SBX1') // true
 */
export function globMatches(glob: string, path: string): boolean {
  let matcher = compiled.get(glob);
  if (!matcher) {
    matcher = compileGlob(glob);
    if (compiledBytes + matcher.bytes > COMPILED_MAX_BYTES) {
      compiled.clear();
      compiledBytes = 0;
    }
    compiled.set(glob, matcher);
    compiledBytes += matcher.bytes;
  }
  return matcher.matches(path);
}

/** Why a text cannot be a path glob (a message for the field), or undefined when it can. */
export function globProblem(glob: string): string | undefined {
  if (!glob.startsWith('/')) return 'must be a path glob starting with "/", e.g. /v1/order/tracking/*';
  // A request path is ASCII (percent-encoded), so no other character could match; and each
  // distinct character of a glob costs its compiled form a mask (500 astral ones, ~240 KB).
  if (!/^[\x21-\x7e]*$/.test(glob)) return 'must be printable ASCII, as request paths are: percent-encode any other character as the path carries it (é as %C3%A9)';
  return undefined;
}
