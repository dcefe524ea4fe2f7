import { locate, type Fixtures } from '../fixtures/index.js';
import type { City, District, Province } from '../fixtures/index.js';

/** A district with the city and province it lies in: one result of an area search. */
export interface AreaView {
  district_id: string;
  district_name: string;
  postal_code: string;
  city_id: string;
  city_name: string;
  province_id: string;
  province_name: string;
  zone: string;
  /** e.g. "Tebet, Kota Jakarta Selatan, DKI Jakarta 12810". */
  label: string;
}

/** The full area of a district id, or undefined for an id not in the coverage data. */
export function areaOf(fixtures: Fixtures, districtId: string): AreaView | undefined {
  const found = locate(fixtures, districtId);
  if (!found) return undefined;
  const { district, city, province } = found;
  return {
    district_id: district.id,
    district_name: district.name,
    postal_code: district.postal_code,
    city_id: city.id,
    city_name: city.name,
    province_id: province.id,
    province_name: province.name,
    zone: province.zone,
    label: `${district.name}, ${city.name}, ${province.name} ${district.postal_code}`,
  };
}

/** Every province, by id. */
export const provincesOf = (fixtures: Fixtures): Province[] => [...fixtures.provinces.values()].sort((a, b) => a.id.localeCompare(b.id));

/** The cities of a province, or undefined when the province is unknown. */
export function citiesOf(fixtures: Fixtures, provinceId: string): City[] | undefined {
  if (!fixtures.provinces.has(provinceId)) return undefined;
  return fixtures.coverage.cities.filter((c) => c.province_id === provinceId).sort((a, b) => a.id.localeCompare(b.id));
}

/** The districts of a city, or undefined when the city is unknown. */
export function districtsOf(fixtures: Fixtures, cityId: string): District[] | undefined {
  if (!fixtures.cities.has(cityId)) return undefined;
  return fixtures.coverage.districts.filter((d) => d.city_id === cityId).sort((a, b) => a.id.localeCompare(b.id));
}

/** Lower case, accents dropped (`é` is `e`), anything but letters and digits a space. */
const normalise = (text: string): string => text.toLowerCase().normalize('NFKD').replace(/\p{M}+/gu, '').replace(/[^a-z0-9 ]+/g, ' ');

/**
 * Districts whose district, city or province name or postal code contain every word
 * of `query` (case- and accent-insensitive); a query with no word matches none. Districts whose own name starts with the query come
 * first, then by label.
 *
 * @example searchAreas(fixtures, 'tebet jakarta', 20)[0].district_id // '317101'
 */
export function searchAreas(fixtures: Fixtures, query: string, limit: number): AreaView[] {
  // A word of letters or digits no name is written in (`日本`) matches none; punctuation alone (`-`) is no word.
  if (query.split(/\s+/).some((word) => normalise(word).trim() === '' && /[\p{L}\p{N}]/u.test(word))) return [];
  const words = normalise(query).split(/\s+/).filter(Boolean);
  // No word at all (`--`): it matches none, not every one.
  if (words.length === 0) return [];
  const wanted = normalise(query).trim();
  const hits: AreaView[] = [];
  for (const district of fixtures.coverage.districts) {
    const area = areaOf(fixtures, district.id);
    if (!area) continue;
    const haystack = normalise(area.label);
    if (words.every((w) => haystack.includes(w))) hits.push(area);
  }
  const rank = (a: AreaView): number => (normalise(a.district_name).startsWith(wanted) ? 0 : 1);
  return hits.sort((a, b) => rank(a) - rank(b) || a.label.localeCompare(b.label)).slice(0, limit);
}
