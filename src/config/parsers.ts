import { isCalendarDay, parseDuration, unitlessNumber } from '../shared/index.js';
import { OptionError } from './option-error.js';
import type { SandboxOptions } from './options.js';

/**
 * The readers the OPTIONS table is written with: each reads or checks one kind of value
 * and, when the value cannot be used, throws an OptionError naming the option.
 */

/** The value as its option's type, where the check before it already proved it (a log level). */
export const as = <T>(value: T | undefined): T => value as T;

/** Throws the OptionError of `key` with `message`. */
export const fail = (key: keyof SandboxOptions, message: string): never => {
  throw new OptionError(key, message);
};

/** A whole number from `min` to `max`: read from text (`fromText`) and checked (`resolve`). */
export const wholeNumber = (key: keyof SandboxOptions, min = 0, max = Number.MAX_SAFE_INTEGER) => ({
  fromText: (text: string): number => (/^\d+$/.test(text.trim()) ? Number(text) : fail(key, `${key} must be a whole number from ${min} to ${max}, not ${JSON.stringify(text)}.`)),
  resolve: (value: number | undefined): number =>
    Number.isInteger(value) && value! >= min && value! <= max ? value! : fail(key, `${key} must be a whole number from ${min} to ${max}, not ${String(value)}.`),
});

/** A text that is not empty. */
export const text = (key: keyof SandboxOptions) => (value: string | undefined): string =>
  typeof value === 'string' && value !== '' ? value : fail(key, `${key} must be a non-empty text.`);

/** A text that is not empty, or none. */
export const optionalText = (key: keyof SandboxOptions) => (value: string | undefined): string | undefined =>
  value === undefined ? undefined : text(key)(value);

/**
 * Refuses a duration option written with a bare number other than 0 in it (`--webhook-timeout 10`,
 * `--awb-delay 5`, a part of `--webhook-retries 0,5,30`): read as milliseconds it would
 * quietly make every attempt time out or every AWB come at once, which no one writing
 * it means. `0` needs no unit.
 */
export const unitRequired = (key: keyof SandboxOptions, value: unknown, example: string): void => {
  const bare = typeof value === 'string' ? unitlessNumber(value) : undefined;
  if (bare !== undefined) fail(key, `${key} "${String(value)}" has a number without a unit (${bare}): write for example ${example} (a bare number would be milliseconds).`);
};

/** A duration above 0 ('10s', '2m'), in milliseconds; `example` is shown when it is not one. */
export const duration = (key: keyof SandboxOptions, example: string) => (value: string | undefined): number => {
  unitRequired(key, value, example);
  const ms = typeof value === 'string' ? parseDuration(value) : undefined;
  return ms !== undefined && ms > 0 ? ms : fail(key, `${key} "${String(value)}" is not a duration above 0: use for example ${example}.`);
};

/** An origin as browsers send it: http(s), a host, perhaps a port, nothing after (a trailing slash is let through: it is dropped when matching). */
export const isOrigin = (text: string): boolean => {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin.toLowerCase() === text.replace(/\/+$/, '').toLowerCase();
  } catch {
    return false;
  }
};

/** A comma-separated list, its parts trimmed, empty ones left out. */
export const list = (value: string): string[] => value.split(',').map((part) => part.trim()).filter(Boolean);

/**
 * A switch's variable: 1, true, yes or on (any case) turn it on; 0, false, no, off or an
 * empty value leave it off; undefined for anything else (`SANDBOX_FSYNC=ture` must not
 * quietly leave durability off).
 */
export const switchValue = (value: string | undefined): boolean | undefined => {
  const text = value?.trim() ?? '';
  if (/^(1|true|yes|on)$/i.test(text)) return true;
  if (/^(0|false|no|off|)$/i.test(text)) return false;
  return undefined;
};

/** Why a switch's variable is refused. */
export const notASwitch = (name: string, value: string): string =>
  `${name} "${value}" is neither on nor off: use 1, true, yes or on to turn it on, and 0, false, no, off or an empty value (or leave it unset) for off.`;

/** ISO 8601 as the sandbox takes it: a date, or a date and time with its offset (without one it would be the machine's local time). */
const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?([Zz]|[+-]\d{2}:\d{2}))?$/;

/**
 * A time given as ISO 8601 (see ISO_TIME) or as epoch milliseconds, in epoch ms; undefined
 * when it is neither, a date the calendar does not have (2026-02-30, which Date.parse
 * would roll over into March) among them.
 */
export function instant(value: string | number): number | undefined {
  const text = String(value).trim();
  if (/^\d+$/.test(text)) return Number(text);
  const parts = ISO_TIME.exec(text);
  if (!parts) return undefined;
  if (!isCalendarDay(Number(parts[1]), Number(parts[2]), Number(parts[3]))) return undefined;
  if (Number(parts[4] ?? 0) > 23 || Number(parts[5] ?? 0) > 59 || Number(parts[6] ?? 0) > 59) return undefined;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : undefined;
}
