/** One sample line of a Prometheus text exposition. */
export interface PrometheusSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A parsed exposition: the type of each metric family, and every sample. */
export interface PrometheusExposition {
  types: Map<string, string>;
  samples: PrometheusSample[];
  /** The sum of the samples named `name` whose labels include `labels` (0 when none does). */
  sum(name: string, labels?: Record<string, string>): number;
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const HELP_LINE = new RegExp(`^# HELP (${NAME}) .*$`);
const TYPE_LINE = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`);
const SAMPLE_LINE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)(?: -?\\d+)?$`);
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)/y;
const VALUE = /^(?:[+-]?(?:\d+\.?\d*(?:e[+-]?\d+)?|\.\d+(?:e[+-]?\d+)?)|[+-]Inf|NaN)$/i;
const SERIES_SUFFIXES: Record<string, readonly string[]> = {
  histogram: ['_bucket', '_sum', '_count'],
  summary: ['', '_sum', '_count'],
};

/** A sample value or an `le` bound as a number: `+Inf` is Infinity. */
const toNumber = (text: string) => Number(text.replace(/inf$/i, 'Infinity'));

/** The same string for the same labels, whatever their order. */
const seriesKey = (labels: Record<string, string>) => JSON.stringify(Object.entries(labels).sort());

function parseLabels(text: string, where: string): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const match = LABEL.exec(text);
    if (!match) {
      throw new Error(`${where}: malformed labels {${text}}`);
    }
    const [, name = '', value = ''] = match;
    if (name in labels) {
      throw new Error(`${where}: label ${name} repeated`);
    }
    labels[name] = value.replace(/\\(.)/g, (_, escaped: string) => (escaped === 'n' ? '\n' : escaped));
  }
  return labels;
}

/** The family a sample belongs to, given the families declared so far: `x_bucket` of histogram `x` is `x`. */
function familyOf(name: string, types: ReadonlyMap<string, string>): string | undefined {
  for (const [family, type] of types) {
    if ((SERIES_SUFFIXES[type] ?? ['']).some((suffix) => `${family}${suffix}` === name)) {
      return family;
    }
  }
  return undefined;
}

/** Checks that each histogram series has increasing `le` bounds, cumulative counts, and `+Inf` equal to `_count`. */
function checkHistograms(exposition: PrometheusExposition): void {
  for (const [family, type] of exposition.types) {
    if (type !== 'histogram') {
      continue;
    }
    const series = new Map<string, PrometheusSample[]>();
    for (const sample of exposition.samples.filter((candidate) => candidate.name === `${family}_bucket`)) {
      const { le, ...rest } = sample.labels;
      if (le === undefined) {
        throw new Error(`${family}_bucket without le`);
      }
      const key = seriesKey(rest);
      series.set(key, [...(series.get(key) ?? []), sample]);
    }
    for (const [key, buckets] of series) {
      const bounds = buckets.map((bucket) => toNumber(bucket.labels.le ?? ''));
      const counts = buckets.map((bucket) => bucket.value);
      if (bounds.some((bound, i) => i > 0 && bound <= (bounds[i - 1] ?? 0)) || bounds.at(-1) !== Infinity) {
        throw new Error(`${family}${key}: le bounds not increasing up to +Inf: ${bounds.join(', ')}`);
      }
      if (counts.some((count, i) => i > 0 && count < (counts[i - 1] ?? 0))) {
        throw new Error(`${family}${key}: bucket counts not cumulative: ${counts.join(', ')}`);
      }
      const total = exposition.samples.find(
        (sample) => sample.name === `${family}_count` && seriesKey(sample.labels) === key,
      );
      if (total?.value !== counts.at(-1)) {
        throw new Error(`${family}${key}: _count ${total?.value} differs from the +Inf bucket ${counts.at(-1)}`);
      }
    }
  }
}

/**
 * Parses the Prometheus text format (version 0.0.4) strictly: every line is a HELP, a TYPE or a sample of a family
 * whose TYPE came before it, each series appears once, and histograms are well formed. Throws on the first fault.
 * Enough for tests; a scraper accepts more (comments, missing TYPE lines).
 */
export function parsePrometheusText(text: string): PrometheusExposition {
  if (!text.endsWith('\n')) {
    throw new Error('the exposition does not end with a line feed');
  }
  const types = new Map<string, string>();
  const samples: PrometheusSample[] = [];
  const seen = new Set<string>();
  for (const [index, line] of text.slice(0, -1).split('\n').entries()) {
    const where = `line ${index + 1}`;
    const type = TYPE_LINE.exec(line);
    if (type) {
      types.set(type[1] ?? '', type[2] ?? '');
      continue;
    }
    if (HELP_LINE.test(line) || line === '') {
      continue;
    }
    const sample = SAMPLE_LINE.exec(line);
    if (!sample) {
      throw new Error(`${where}: not a HELP, TYPE or sample line: ${line}`);
    }
    const [, name = '', labelText = '', value = ''] = sample;
    if (!VALUE.test(value)) {
      throw new Error(`${where}: ${value} is not a number`);
    }
    if (familyOf(name, types) === undefined) {
      throw new Error(`${where}: ${name} has no TYPE line before it`);
    }
    const labels = parseLabels(labelText, where);
    const series = `${name}${seriesKey(labels)}`;
    if (seen.has(series)) {
      throw new Error(`${where}: series ${series} repeated`);
    }
    seen.add(series);
    samples.push({ name, labels, value: toNumber(value) });
  }
  const exposition: PrometheusExposition = {
    types,
    samples,
    sum: (name, labels = {}) =>
      samples
        .filter(
          (sample) =>
            sample.name === name && Object.entries(labels).every(([label, value]) => sample.labels[label] === value),
        )
        .reduce((total, sample) => total + sample.value, 0),
  };
  checkHistograms(exposition);
  return exposition;
}
