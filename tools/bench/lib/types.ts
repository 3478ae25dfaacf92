/** A benchmark scenario: tools/bench/scenarios/<name>.ts exports `scenario`. */
export interface BenchScenario {
  name: string;
  description: string;
  run(options: BenchOptions): Promise<BenchResult>;
}

export interface BenchOptions {
  /** smaller, faster run (CI smoke) */
  quick: boolean;
  log: (msg: string) => void;
}

export interface BenchResult {
  /** table header and rows, printed as is */
  columns: string[];
  rows: (string | number)[][];
  /** one-line verdict, e.g. "edge reaches 74% of bare Aedes (target ≥ 60%)" */
  summary?: string;
  /** false when the scenario's target was missed */
  ok?: boolean;
}
