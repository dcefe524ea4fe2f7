import type { ResolvedOptions, SandboxOptions } from './options.js';

/** One option: how the CLI and the environment spell it, its default, and how it is read. */
export interface OptionSpec<In, Out> {
  /** The commander flag, e.g. '--awb-delay <delay>'; none for in-process-only options. */
  flag?: string;
  /** The environment variable. For a switch, 1, true, yes or on (any case) turn it on. */
  env?: string;
  /** The one line of `--help`. */
  help?: string;
  /** The default in-process (createSandbox); undefined: none. */
  default: In | undefined;
  /** The flag may be given more than once; the values add up. */
  repeatable?: boolean;
  /** How `--help` shows the default, where its value would say little. */
  shownDefault?: string;
  /** The CLI's default where it differs from the in-process one. */
  cliDefault?: In;
  /** The value is a secret (a token, a URL that may hold a password): a refusal never shows it. */
  secret?: true;
  /** Reads the text of a flag or variable; throws a message when it is not one. Default: the text. */
  fromText?: (text: string) => In;
  /** Checks a value (the default already filled in) and converts it; throws a message naming the option. */
  resolve: (value: In | undefined) => Out;
}

/** The OPTIONS table's type: one OptionSpec per option of SandboxOptions, reading it into its ResolvedOptions form. */
export type Schema = { [K in keyof SandboxOptions]-?: OptionSpec<Exclude<SandboxOptions[K], undefined>, ResolvedOptions[K]> };
