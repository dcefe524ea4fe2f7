/**
 * The sandbox's price list (the provider publishes none). Every figure is rupiah;
 * docs/reference/provider-api.md, "Coverage, couriers and rates", documents the same numbers.
 */
export const TARIFF = {
  /** Per chargeable kg, sender and receiver in the same city. */
  sameCity: 8_000,
  /** Per chargeable kg, same province, another city. */
  sameProvince: 10_000,
  /** Per chargeable kg between provinces, by origin zone then destination zone. */
  zones: {
    A: { A: 12_000, B: 16_000, C: 24_000, D: 34_000 },
    B: { A: 16_000, B: 13_000, C: 20_000, D: 30_000 },
    C: { A: 24_000, B: 20_000, C: 15_000, D: 26_000 },
    D: { A: 34_000, B: 30_000, C: 26_000, D: 18_000 },
  } as Record<string, Record<string, number>>,
  /** Insurance: this share of the declared value plus a fixed fee. */
  insuranceRate: 0.002,
  insuranceFee: 5_000,
  /** COD: this share of the amount to collect, at least the minimum. */
  codRate: 0.03,
  codMinimum: 2_500,
  /** Fees are rounded up to a multiple of this. */
  roundTo: 100,
  /** Volumetric kg = length × width × height (cm) / this divisor. */
  volumetricDivisor: 6_000,
  /** The part of a kg above a whole kg that is not charged (couriers' 0.3 kg tolerance). */
  toleranceGrams: 300,
} as const;

/** Rounds a fee up to the next multiple of `TARIFF.roundTo` rupiah. */
export const roundFee = (rupiah: number): number => Math.ceil(Math.round(rupiah * 100) / 100 / TARIFF.roundTo) * TARIFF.roundTo;
