/** Provinces, cities, districts and the area search, from fixtures/coverage.json. */

export { areaOf, citiesOf, districtsOf, provincesOf, searchAreas } from './areas.js';
export type { AreaView } from './areas.js';
