import { describe, expect, it } from 'vitest';
import { roundFee } from '../../src/rates/tariff.js';
import { chargeableWeight } from '../../src/rates/weight.js';

const none = { length: 0, width: 0, height: 0 };

describe('chargeableWeight', () => {
  it.each([
    [0.2, 1],
    [1, 1],
    [1.3, 1],
    [1.31, 2],
    [1.5, 2],
    [2.3, 2],
    [2.35, 3],
  ])('charges %f kg as %i kg (0.3 kg tolerance, at least 1 kg)', (kg, charged) => {
    expect(chargeableWeight(kg, none).chargeable_kg).toBe(charged);
  });

  it('charges the volumetric weight (L×W×H/6000) when it is greater', () => {
    expect(chargeableWeight(1, { length: 40, width: 30, height: 20 })).toEqual({ actual_kg: 1, volumetric_kg: 4, chargeable_kg: 4 });
  });

  it('charges the actual weight when it is greater', () => {
    expect(chargeableWeight(1.5, { length: 30, width: 20, height: 10 })).toEqual({ actual_kg: 1.5, volumetric_kg: 1, chargeable_kg: 2 });
  });

  it('applies the tolerance to the volumetric weight too', () => {
    // 50 × 40 × 39 / 6000 = 13 kg exactly; 50 × 40 × 40 / 6000 = 13.333 kg
    expect(chargeableWeight(1, { length: 50, width: 40, height: 39 }).chargeable_kg).toBe(13);
    expect(chargeableWeight(1, { length: 50, width: 40, height: 40 }).chargeable_kg).toBe(14);
  });
});

describe('roundFee', () => {
  it.each([
    [24_000, 24_000],
    [24_001, 24_100],
    [7_469.13, 7_500],
    [300.0000000001, 300],
  ])('rounds %f rupiah up to %i', (fee, rounded) => {
    expect(roundFee(fee)).toBe(rounded);
  });
});
