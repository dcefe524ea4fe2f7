/**
 * Whether a token can be sent as `Authorization: Bearer <token>`: visible characters of one
 * byte (ASCII and Latin-1, as node reads and writes a header) without spaces. A space splits
 * it there, a control character may not be sent, and a character above U+00FF cannot be
 * sent in a header at all. ASCII is safest: a client that sends its headers in UTF-8 (curl
 * from a UTF-8 terminal) sends another token for `ö` than one that sends Latin-1 (node).
 */
export const isUsableToken = (token: string): boolean => /^[\x21-\x7e\xa1-\xff]+$/.test(token);
