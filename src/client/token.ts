import { isUsableToken } from '../shared/index.js';
import { TOKEN_RULE } from './flags.js';

/**
 * The token of a client command when `--token` is not given: the server's variable
 * SANDBOX_TOKENS when it holds one token (with several, which client to act for is the
 * caller's to say), else the older
 * SANDBOX_TOKEN, which still works with a deprecation line. A token the variable holds
 * is checked as `--token`'s value is (see isUsableToken): a variable pasted with a stray
 * character names itself rather than failing the request.
 */
export function tokenFromEnv(env: NodeJS.ProcessEnv, err: (text: string) => void, command = 'report'): string | undefined {
  const tokens = (env.SANDBOX_TOKENS ?? '')
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  if (tokens.length === 1) return checked(tokens[0]!, 'SANDBOX_TOKENS', command, err);
  if (tokens.length > 1) {
    err(`shipping-sandbox ${command}: SANDBOX_TOKENS holds ${tokens.length} tokens; say which client to act for with --token\n`);
    return undefined;
  }
  if (env.SANDBOX_TOKEN) {
    err(`shipping-sandbox ${command}: SANDBOX_TOKEN is deprecated and will be removed; set SANDBOX_TOKENS, the variable the server reads\n`);
    return checked(env.SANDBOX_TOKEN, 'SANDBOX_TOKEN', command, err);
  }
  err(`shipping-sandbox ${command}: required option '--token <token>' not specified (or set SANDBOX_TOKENS)\n`);
  return undefined;
}

function checked(token: string, variable: string, command: string, err: (text: string) => void): string | undefined {
  if (isUsableToken(token)) return token;
  err(`shipping-sandbox ${command}: the token in ${variable} is not one the sandbox can take: ${TOKEN_RULE}; it is not shown here\n`);
  return undefined;
}
