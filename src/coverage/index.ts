export { areaOf, citiesOf, districtsOf, provincesOf, searchAreas } from './areas.js';
export type { AreaView } from './areas.js';
