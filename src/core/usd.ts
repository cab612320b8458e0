/** Rounds a dollar amount to a millionth of a dollar, so sums of float costs stay readable (0.0007199999999999999 → 0.00072). */
export function roundUsd(amount: number): number {
  return Number((Math.round(amount * 1e6) / 1e6).toFixed(6)) + 0;
}
