/** Rounds a dollar amount to a millionth of a dollar, so sums of float costs stay readable (0.0007199999999999999 → 0.00072). */
export function roundUsd(amount: number): number {
  // The integer count of millionths divided by 1e6 is already the double nearest to that decimal (the one a parse of
  // its six-decimal text would give), so no text round trip is needed; `+ 0` turns -0 into 0.
  return Math.round(amount * 1e6) / 1e6 + 0;
}
