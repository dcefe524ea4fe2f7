/** Tokens shorter than this are shown fully masked: their first and last characters would give too much away. */
export const MIN_SHOWN_LENGTH = 16;

/**
 * A token or secret as the start banner and read_only views show it: its first 4 and
 * last 3 characters around an ellipsis, or `****` when it is shorter than 16 characters.
 *
 * @example mask('partner-a-token-0111') // 'part…111'
 * @example mask('short') // '****'
 */
export function mask(secret: string): string {
  return secret.length < MIN_SHOWN_LENGTH ? '****' : `${secret.slice(0, 4)}…${secret.slice(-3)}`;
}
