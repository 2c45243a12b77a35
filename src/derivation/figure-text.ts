// The derived figures in the form people and tools read, one form for every place that shows them: the
// function's RotationPolicy annotations (docs/function.md) and the controller's per-NodePool status.
// Durations are Go duration strings (what Karpenter and kubectl users read), counts are integers.
import { formatGoDuration } from '../util/duration.js';
import type { NodePoolRotationStatus } from '../generated/api-types.js';
import type { Figures } from './derive.js';

/** The figures' shape in the RotationPolicy status (generated from the schema), also the annotations' names. */
export type FigureValues = NonNullable<NodePoolRotationStatus['figures']>;

/**
 * The derivable figures by name, in a fixed order. A null figure (not derivable: `expireAfter: Never` leaves
 * no deadline) is left out rather than shown as a made-up value.
 */
export function figureValues(f: Figures): FigureValues {
  const out: FigureValues = {};
  const duration = (name: keyof FigureValues, seconds: number | null): void => {
    if (seconds !== null) Object.assign(out, { [name]: formatGoDuration(seconds) });
  };
  const count = (name: keyof FigureValues, n: number | null): void => {
    if (n !== null) Object.assign(out, { [name]: n });
  };
  duration('windowPeriod', f.windowPeriodSeconds);
  duration('rotationBound', f.rotationBoundSeconds);
  duration('leadTime', f.leadTimeSeconds);
  duration('ageThreshold', f.ageThresholdSeconds);
  count('guaranteedChances', f.guaranteedChances);
  duration('expectedRotation', f.expectedRotationSeconds);
  count('capacityPerOccurrence', f.capacityPerOccurrence);
  return out;
}
