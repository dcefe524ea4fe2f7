import { notACursor } from '../shared/index.js';

/** A position in a listing: ordered by `rank`, then by `id`. Every adapter pages with it. */
export interface Position {
  rank: number;
  id: string;
}

/** A cursor as clients see it: opaque text. */
export const encodeCursor = (position: Position): string => Buffer.from(`${position.rank}:${position.id}`).toString('base64url');

/** The position of a cursor, or undefined when the text is not one. */
export function decodeCursor(cursor: string): Position | undefined {
  const text = Buffer.from(cursor, 'base64url').toString();
  const colon = text.indexOf(':');
  const rank = Number(text.slice(0, colon));
  // Ranks are creation times and sequence numbers: whole numbers a database column holds.
  if (colon < 1 || !Number.isSafeInteger(rank)) return undefined;
  return { rank, id: text.slice(colon + 1) };
}

/** The position of a listing's `cursor` parameter; a RuleViolation naming `cursor` when it is not one. */
export function positionOf(cursor: string | undefined): Position | undefined {
  if (cursor === undefined) return undefined;
  const position = decodeCursor(cursor);
  if (!position) throw notACursor();
  return position;
}
