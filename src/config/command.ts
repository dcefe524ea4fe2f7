import { Command, InvalidArgumentError, Option } from 'commander';
import { VERSION } from '../shared/index.js';
import type { OptionSpec } from './option-spec.js';
import type { SandboxOptions } from './options.js';
import { notASwitch, switchValue } from './parsers.js';
import { OPTIONS } from './table.js';

/** The command line that starts a sandbox: one flag per option of OPTIONS, with its environment fallback, exactly as DESIGN.md's stable interfaces. src/cli.ts adds the client commands (report, trigger, deliveries, listen) as subcommands. */
export function program(): Command {
  const command = new Command('shipping-sandbox')
    .description('A stateful sandbox of the Shipping Order Service API.')
    .version(VERSION);
  for (const spec of Object.values(OPTIONS) as OptionSpec<unknown, unknown>[]) {
    if (spec.flag === undefined) continue;
    const isSwitch = !spec.flag.includes('<');
    // commander turns a switch on when its variable is merely set; ours reads the value (SANDBOX_FSYNC=0 is off).
    const option = new Option(spec.flag, isSwitch && spec.env ? `${spec.help} (env ${spec.env}=1)` : spec.help);
    if (spec.env && !isSwitch) option.env(spec.env);
    const fallback = spec.cliDefault ?? spec.default;
    const shown = spec.shownDefault ?? (Array.isArray(fallback) ? fallback.join(',') : String(fallback));
    if (fallback !== undefined && shown !== '' && !isSwitch) option.default(fallback, shown);
    const parse = (value: string): unknown => {
      try {
        const read = spec.fromText ? spec.fromText(value) : value;
        spec.resolve(read); // the same check createSandbox makes, so the message names the flag
        return read;
      } catch (error) {
        // Commander's message would quote the value (`argument '<value>' is invalid`): a secret's
        // refusal goes out as the start's own, naming the flag alone (src/cli.ts).
        if (spec.secret) throw error;
        throw new InvalidArgumentError((error as Error).message);
      }
    };
    if (spec.repeatable) option.argParser((value: string, previous: unknown[] = []) => [...previous, ...(parse(value) as unknown[])]);
    else if (!isSwitch) option.argParser(parse);
    command.addOption(option);
  }
  return command;
}

/** The options the flags and variables give; an option neither names is left to its default. */
export function optionsOf(command: Command, env: NodeJS.ProcessEnv = process.env): SandboxOptions {
  const flags = command.opts();
  const options: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(OPTIONS) as [keyof SandboxOptions, OptionSpec<unknown, unknown>][]) {
    if (spec.flag === undefined) continue;
    const name = new Option(spec.flag).attributeName();
    const isSwitch = !spec.flag.includes('<');
    if (!isSwitch) {
      options[key] = flags[name];
      continue;
    }
    const text = spec.env ? env[spec.env] : undefined;
    const on = switchValue(text);
    if (on === undefined) command.error(`error: ${notASwitch(spec.env!, text!)}`);
    options[key] = flags[name] === true || on;
  }
  return options as SandboxOptions;
}
