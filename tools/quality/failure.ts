/**
 * A reason the harness cannot give a verdict. It always ends the run with exit code 2, which is
 * never a pass, and its message is printed on stderr.
 */
export class QualityFailure extends Error {
  override readonly name = 'QualityFailure';
}
