import { TARIFF } from './tariff.js';

/** The weights of a parcel in kg, as a courier weighs it. */
export interface ParcelWeight {
  actual_kg: number;
  /** length × width × height / 6000, to two decimals. */
  volumetric_kg: number;
  /** Whole kg charged: the greater weight, rounded up past the 0.3 kg tolerance, at least 1. */
  chargeable_kg: number;
}

export interface Dimensions {
  length: number;
  width: number;
  height: number;
}

/**
 * The chargeable weight of a parcel: the greater of its actual and volumetric weight,
 * in whole kg. As couriers do, up to 0.3 kg above a whole kg is not charged
 * (1.3 kg → 1 kg, 1.31 kg → 2 kg), and the minimum is 1 kg.
 *
 * @example chargeableWeight(1.5, { length: 30, width: 20, height: 10 }).chargeable_kg // 2
 */
export function chargeableWeight(actualKg: number, dims: Dimensions): ParcelWeight {
  const actualGrams = Math.round(actualKg * 1000);
  const volumetricGrams = Math.round((dims.length * dims.width * dims.height * 1000) / TARIFF.volumetricDivisor);
  const grams = Math.max(actualGrams, volumetricGrams);
  const whole = Math.floor(grams / 1000);
  const rest = grams - whole * 1000;
  return {
    actual_kg: actualGrams / 1000,
    volumetric_kg: Math.round(volumetricGrams / 10) / 100,
    chargeable_kg: Math.max(1, whole + (rest > TARIFF.toleranceGrams ? 1 : 0)),
  };
}
