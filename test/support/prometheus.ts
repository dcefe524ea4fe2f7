/** One sample of a Prometheus text exposition: `name{labels} value`. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = '[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*"';
const VALUE = '(?:[+-]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:[eE][+-]?\\d+)?|[+-]?Inf|NaN)';
const SAMPLE = new RegExp(`^(${NAME})(?:\\{((?:${LABEL})(?:,${LABEL})*)?,?\\})? (${VALUE})(?: -?\\d+)?$`);
const HELP = new RegExp(`^# HELP (${NAME}) .*$`);
const TYPE = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`);
const SUFFIXES: Record<string, string[]> = { histogram: ['_bucket', '_sum', '_count'], summary: ['', '_sum', '_count'] };

/**
 * Parses the Prometheus text exposition format (0.0.4) strictly: every line must be a
 * HELP or TYPE comment, a sample, or empty; every sample must belong to a family whose
 * TYPE came before it. Throws naming the first line that is not.
 */
export function parsePrometheus(text: string): Sample[] {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  text.split('\n').forEach((line, i) => {
    if (line === '' || HELP.test(line)) return;
    const type = TYPE.exec(line);
    if (type) {
      if (types.has(type[1]!)) throw new Error(`line ${i + 1}: a second TYPE for ${type[1]}`);
      types.set(type[1]!, type[2]!);
      return;
    }
    const sample = SAMPLE.exec(line);
    if (!sample) throw new Error(`line ${i + 1} is not in the exposition format: ${JSON.stringify(line)}`);
    const [, name, labelText, value] = sample as unknown as [string, string, string | undefined, string];
    const family = [...types.entries()].find(([family, kind]) => (SUFFIXES[kind] ?? ['']).some((suffix) => name === family + suffix));
    if (!family) throw new Error(`line ${i + 1}: sample ${name} has no TYPE before it`);
    const labels: Record<string, string> = {};
    for (const [, key, raw] of (labelText ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[key!] = raw!.replace(/\\n/g, '\n').replace(/\\(["\\])/g, '$1');
    }
    samples.push({ name, labels, value: Number(value.replace(/Inf$/, 'Infinity')) });
  });
  return samples;
}

/** The value of the sample with this name whose labels include `labels`; 0 when there is none (a counter not yet touched). */
export function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return found?.value ?? 0;
}
