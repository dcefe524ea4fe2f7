import { Command, InvalidArgumentError, Option } from 'commander';
import { lastEvents, PACT_RUN, type ReportEvent } from '../records/index.js';
import { isJsonObject } from '../shared/index.js';
import { clientIdValue, clientProgram, parseFlags, required, timeoutOption, tokenValue } from './flags.js';
import { callerHeaders, failure, jsonOf, notASandbox, withDeadline } from './exchange.js';
import { tokenFromEnv } from './token.js';
import { httpUrl, sandboxUrl } from './url.js';
import { refusal } from './refusal.js';

/** What `shipping-sandbox report` was asked for. */
export interface ReportCommand {
  url: string;
  /** From --token, else from the environment (see tokenFromEnv). */
  token?: string;
  format: 'json' | 'junit' | 'html';
  failUnder?: number;
  coverageUnder?: number;
  /** Catalogue items that must be handled, whatever the share (--require, repeatable, comma-separated). */
  require?: string[];
  client?: string;
  /** Milliseconds the command waits for the sandbox's answers, every read together (--timeout). */
  timeout: number;
}

function percent(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 100) throw new InvalidArgumentError('must be a number from 0 to 100');
  return n;
}

/**
 * `--require`'s items, added to those of the flags before it. A value that names none
 * (`--require "$ITEMS"` with the variable unset) is refused: it would turn a CI gate off
 * without a word.
 */
function requiredItems(value: string, before: string[] = []): string[] {
  const items = value.split(',').map((id) => id.trim()).filter((id) => id !== '');
  if (items.length === 0) throw new InvalidArgumentError('must name at least one catalogue item, e.g. webhook.bad-signature');
  return [...before, ...items];
}

/** `shipping-sandbox report`: its own command line, apart from the server's flags. */
export function reportProgram(name = 'shipping-sandbox report'): Command {
  return clientProgram(name)
    .summary("print a client's readiness report from a running sandbox")
    .description("Prints a sandbox client's readiness report; exits 1 when its handled share is below --fail-under or its coverage below --coverage-under.")
    .addOption(required(new Option('--url <url>', 'base URL of the sandbox, e.g. http://127.0.0.1:4010').argParser(httpUrl('http://127.0.0.1:4010'))))
    .addOption(new Option('--token <token>', "the client's bearer token; default: SANDBOX_TOKENS when it holds one token, as the server reads it").argParser(tokenValue))
    .addOption(new Option('--format <format>', 'what to print').choices(['json', 'junit', 'html']).default('json'))
    .addOption(new Option('--fail-under <percent>', 'exit 1 when the handled share (handled / graded items, in percent) is below this').argParser(percent))
    .addOption(new Option('--coverage-under <percent>', "exit 1 when the coverage of the provider spec (documented statuses of its operations exercised, in percent) is below this").argParser(percent))
    .option('--require <items>', 'exit 1 unless each of these catalogue items is handled, e.g. webhook.bad-signature,check.bad-signature (comma-separated, repeatable)', requiredItems)
    .addOption(new Option('--client <id>', 'the client an admin token acts for (X-Sandbox-Client)').argParser(clientIdValue))
    .addOption(timeoutOption());
}

/** Fetches the report, prints it, and returns the exit code: 0, 1 below --fail-under or --coverage-under, 2 for a bad flag or when the sandbox cannot give it (within --timeout). */
export async function runReport(argv: string[], out: (text: string) => void, err: (text: string) => void, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const program = parseFlags(reportProgram(), argv, out, err);
  if (typeof program === 'number') return program;
  return executeReport(program.opts<ReportCommand>(), out, err, env);
}

/** The report with parsed flags (see runReport). */
export async function executeReport(options: ReportCommand, out: (text: string) => void, err: (text: string) => void, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  if (options.token === undefined) {
    const token = tokenFromEnv(env, err);
    if (token === undefined) return 2;
    options.token = token;
  }
  const headers = callerHeaders(options.token ?? '', options.client);
  const send = withDeadline(options.timeout);
  const get = async (format: string): Promise<string> => {
    const res = await send(sandboxUrl(options.url, `/__sandbox/report?format=${format}`), { headers });
    if (!res.ok) throw new Error(refusal(res.status, res.text));
    return res.text;
  };
  let json: string;
  let report: ReadinessReport | undefined;
  try {
    json = await get('json');
    report = readReport(json);
  } catch (error) {
    err(`shipping-sandbox report: ${failure(error)}\n`);
    return 2;
  }
  if (report === undefined) {
    err(`shipping-sandbox report: ${notASandbox(options.url, 200, 'no readiness report')}\n`);
    return 2;
  }
  // A flag that names no graded item prints no report: a CI step keeping stdout as its report file gets none from a run that failed on its flags.
  const required = options.require ?? [];
  const unknown = required.filter((id) => !report!.items.some((item) => item.id === id && item.graded));
  if (unknown.length > 0) {
    err(`shipping-sandbox report: --require names no graded item ${unknown.map((id) => `"${id}"`).join(', ')}; the graded items are ${report.items.filter((item) => item.graded).map((item) => item.id).join(', ')}\n`);
    return 2;
  }
  try {
    if (options.format === 'json') out(`${json}\n`);
    else {
      // The printed report and the gate's are two reads: the gate reads again after the print until two
      // reads grade alike (traffic between them, webhook retries on a real clock, may change the grades).
      for (let tries = 1; ; tries += 1) {
        const printed = await get(options.format);
        const after = readReport(await get('json'));
        const same = after !== undefined && gradesOf(after) === gradesOf(report);
        if (after) report = after;
        if (same || tries === 3) {
          out(printed);
          break;
        }
      }
    }
  } catch (error) {
    err(`shipping-sandbox report: ${failure(error)}\n`);
    return 2;
  }
  const { summary, coverage, run, items } = report;
  // A Pact verification's provider states start a run of their own, which grades Pact's requests: said whatever the gates say.
  let code = 0;
  if (run?.name === PACT_RUN) {
    err(`shipping-sandbox report: the current run is "${PACT_RUN}", which a Pact verification's provider states started: it grades Pact's requests, not your client's. Start your named run, then your client's tests, after the verification.\n`);
    // A gate passed on Pact's requests would pass a client nobody graded: it fails, as the documented jq gate does.
    if (options.failUnder !== undefined || required.length > 0 || options.coverageUnder !== undefined) code = 1;
  }
  // The exact share, not the rounded percentage shown: 18 of 22 (81.818...%) is below --fail-under 81.82.
  const failedUnder = options.failUnder !== undefined && below(summary.handled, summary.graded, summary.handled_percent, options.failUnder);
  if (failedUnder) {
    err(`shipping-sandbox report: ${summary.handled_percent}% handled (${summary.handled} of ${summary.graded} graded items), below --fail-under ${options.failUnder}\n`);
    code = 1;
  }
  for (const item of items.filter((i) => required.includes(i.id) && i.status !== 'handled')) {
    // What it wanted, then what the client did: the last requests or attempts behind it.
    const last = lastEvents(Array.isArray(report.events) ? report.events : [], item.id);
    const behind = last.events.map((e) => `\n  ${new Date(e.at).toISOString()} ${e.note}`).join('');
    err(`shipping-sandbox report: ${item.id} is required (--require) and ${item.status.replace('_', ' ')}: ${item.detail}${behind ? `\n  ${last.heading}${behind}` : ''}\n`);
    code = 1;
  }
  // A miss is kept for the whole run: a fixed client graded in the same run fails again.
  const missedFailing = items.some((i) => i.status === 'not_handled' && (i.missed ?? 0) > 0 && (required.includes(i.id) || failedUnder));
  if (code === 1 && missedFailing && run?.name !== PACT_RUN) {
    err(`shipping-sandbox report: a miss counts until the run ends${run?.name ? ` (this one is "${run.name}")` : ''}: after a fix, start a new run (POST /__sandbox/runs) before the tests\n`);
  }
  if (options.coverageUnder !== undefined && below(coverage.summary.statuses_exercised, coverage.summary.statuses, coverage.summary.percent, options.coverageUnder)) {
    err(`shipping-sandbox report: ${coverage.summary.percent}% coverage (${coverage.summary.statuses_exercised} of ${coverage.summary.statuses} documented statuses of the provider's operations exercised), below --coverage-under ${options.coverageUnder}\n`);
    code = 1;
  }
  return code;
}

/**
 * Whether `part` of `whole` is below `threshold` percent, compared exactly (`part × 100` with
 * `threshold × whole`, no division to land just under an exact value); the rounded percentage
 * when the counts are missing. None of none is 0 %.
 */
function below(part: unknown, whole: unknown, rounded: number, threshold: number): boolean {
  if (typeof part !== 'number' || typeof whole !== 'number') return rounded < threshold;
  return part * 100 < threshold * whole || (whole === 0 && threshold > 0);
}

/** What the gates read of a report, as one text: two reports that give the same are alike for them. */
const gradesOf = (r: ReadinessReport): string => JSON.stringify([r.summary.handled, r.summary.graded, r.summary.handled_percent, r.coverage.summary.percent, r.run?.name ?? null, r.items.map((i) => `${i.id}:${i.status}`)]);

interface ReadinessReport {
  summary: { handled_percent: number; handled: number; graded: number };
  items: Array<{ id: string; status: string; detail: string; graded: boolean; missed?: number }>;
  coverage: { summary: { percent: number; statuses: number; statuses_exercised: number } };
  run?: { name?: string } | null;
  events?: ReportEvent[];
}

/** The report in a 200's body, or undefined when the body is not one (whatever answers at --url is not a sandbox: a proxy's page, another service). */
function readReport(text: string): ReadinessReport | undefined {
  const report = jsonOf(text) as Partial<ReadinessReport> | null | undefined;
  const shaped =
    typeof report?.summary?.handled_percent === 'number' &&
    Array.isArray(report.items) &&
    report.items.every((item: unknown) => isJsonObject(item) && typeof item.id === 'string' && typeof item.status === 'string' && typeof item.graded === 'boolean') &&
    typeof report.coverage?.summary?.percent === 'number';
  return shaped ? (report as ReadinessReport) : undefined;
}
