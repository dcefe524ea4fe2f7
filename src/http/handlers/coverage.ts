import { NotFound } from '../../shared/index.js';
import { json, type HandlerMap } from '../handler.js';
import type { Fixtures } from '../../fixtures/index.js';
import { citiesOf, districtsOf, provincesOf, searchAreas } from '../../coverage/index.js';

/** Default and largest number of results of an area search. */
export const SEARCH_LIMIT = { default: 20, max: 100 } as const;

/**
 * The coverage-area operations (provider-interface.md part 1 item 5): provinces,
 * cities of a province, districts of a city, and a search. An unknown parent id is
 * 404, as an unknown order is.
 */
export function coverageHandlers(fixtures: Fixtures): HandlerMap {
  return {
    listProvinces: () => json(200, { success: true, data: provincesOf(fixtures) }),

    listCities: ({ query }) => {
      const cities = citiesOf(fixtures, String(query.province_id));
      if (!cities) throw new NotFound();
      return json(200, { success: true, data: cities });
    },

    listDistricts: ({ query }) => {
      const districts = districtsOf(fixtures, String(query.city_id));
      if (!districts) throw new NotFound();
      return json(200, { success: true, data: districts });
    },

    searchArea: ({ query }) => {
      const limit = (query.limit as number | undefined) ?? SEARCH_LIMIT.default;
      const data = searchAreas(fixtures, String(query.q), limit);
      return json(200, { success: true, data });
    },
  };
}
