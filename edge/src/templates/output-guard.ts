/** The bounds one render runs within (set per render by the template runtime). */
export interface RenderLimits {
  deadline: number;
  maxOutput: number;
  maxIterations: number;
  maxRange: number;
}

/**
 * What operators and methods need from a render: its limits and the output checks. The
 * interpreter's RenderContext implements it; arith.ts and methods.ts depend on this and not on
 * the interpreter, which imports them.
 */
export interface OutputGuard {
  readonly limits: RenderLimits;
  /** Joins texts, refusing before building a result longer than the output cap. */
  join(parts: string[], sep: string): string;
  checkString(s: string): string;
}
