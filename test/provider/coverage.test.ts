import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testSandbox, type TestSandbox } from '../support/sandbox.js';

let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await testSandbox();
});
afterAll(() => sandbox.close());

describe('GET /v1/area/provinces', () => {
  it('lists every province of the coverage data with its zone', async () => {
    const res = await sandbox.call('GET', '/v1/area/provinces');
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.data).toHaveLength(sandbox.services.fixtures.provinces.size);
    expect(res.body.data).toContainEqual({ id: '31', name: 'DKI Jakarta', zone: 'A' });
  });

  it('answers 401 without a token', async () => {
    const res = await sandbox.call('GET', '/v1/area/provinces', { token: null });
    expect(res.status).toBe(401);
  });
});

describe('GET /v1/area/cities', () => {
  it('lists the cities of a province', async () => {
    const res = await sandbox.call('GET', '/v1/area/cities?province_id=31');
    expect(res.status).toBe(200);
    expect(res.body.data.length).toBeGreaterThan(1);
    for (const city of res.body.data) expect(city.province_id).toBe('31');
    expect(res.body.data).toContainEqual({ id: '3171', province_id: '31', name: 'Kota Jakarta Selatan' });
  });

  it('returns 400 naming province_id when it is missing', async () => {
    const res = await sandbox.call('GET', '/v1/area/cities');
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'province_id', message: 'is required' }]);
  });

  it('returns 400 naming province_id when it is not digits', async () => {
    const res = await sandbox.call('GET', '/v1/area/cities?province_id=jakarta');
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'province_id', message: expect.stringContaining('digits only') }]);
  });

  it('returns 404 for a province that is not in the coverage data', async () => {
    const res = await sandbox.call('GET', '/v1/area/cities?province_id=99');
    expect(res.status).toBe(404);
    expect(res.body.message).toBe('Record Not Found');
  });
});

describe('GET /v1/area/districts', () => {
  it('lists the districts of a city with their postal codes', async () => {
    const res = await sandbox.call('GET', '/v1/area/districts?city_id=3171');
    expect(res.status).toBe(200);
    expect(res.body.data).toContainEqual({ id: '317101', city_id: '3171', name: 'Tebet', postal_code: '12810' });
    for (const district of res.body.data) expect(district.city_id).toBe('3171');
  });

  it('returns 400 naming city_id when it is missing', async () => {
    const res = await sandbox.call('GET', '/v1/area/districts?province_id=31');
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'city_id', message: 'is required' }]);
  });

  it('returns 404 for a city that is not in the coverage data', async () => {
    const res = await sandbox.call('GET', '/v1/area/districts?city_id=9999');
    expect(res.status).toBe(404);
  });
});

describe('GET /v1/area/search', () => {
  it('finds a district by name, with its city, province and zone', async () => {
    const res = await sandbox.call('GET', '/v1/area/search?q=tebet');
    expect(res.status).toBe(200);
    expect(res.body.data[0]).toEqual({
      district_id: '317101',
      district_name: 'Tebet',
      postal_code: '12810',
      city_id: '3171',
      city_name: 'Kota Jakarta Selatan',
      province_id: '31',
      province_name: 'DKI Jakarta',
      zone: 'A',
      label: 'Tebet, Kota Jakarta Selatan, DKI Jakarta 12810',
    });
  });

  it('finds a district by postal code', async () => {
    const res = await sandbox.call('GET', '/v1/area/search?q=40154');
    expect(res.body.data.map((a: { district_id: string }) => a.district_id)).toEqual(['327301']);
  });

  it('needs every word to match, in any of the names', async () => {
    const res = await sandbox.call('GET', `/v1/area/search?q=${encodeURIComponent('BANDUNG sukasari')}`);
    expect(res.body.data).toHaveLength(1);
    expect(res.body.data[0].district_id).toBe('327301');
  });

  it('lists the districts of a city matched by its name, up to limit', async () => {
    const all = await sandbox.call('GET', '/v1/area/search?q=jakarta&limit=100');
    expect(all.body.data.length).toBeGreaterThan(5);
    for (const area of all.body.data) expect(area.label.toLowerCase()).toContain('jakarta');
    const some = await sandbox.call('GET', '/v1/area/search?q=jakarta&limit=3');
    expect(some.body.data).toEqual(all.body.data.slice(0, 3));
  });

  it.each(['日本', '--', '!!', '  '])('answers an empty list for %j, which has no word to match, not every district', async (q) => {
    const res = await sandbox.call('GET', `/v1/area/search?q=${encodeURIComponent(q)}&limit=100`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: [] });
  });

  it('answers an empty list when one word is of letters no name is written in (tebet 日本), and takes punctuation for no word (tebet -)', async () => {
    expect((await sandbox.call('GET', `/v1/area/search?q=${encodeURIComponent('tebet 日本')}`)).body.data).toEqual([]);
    const dashed = await sandbox.call('GET', `/v1/area/search?q=${encodeURIComponent('tebet -')}`);
    expect(dashed.body.data).toEqual((await sandbox.call('GET', '/v1/area/search?q=tebet')).body.data);
    expect(dashed.body.data.length).toBeGreaterThan(0);
  });

  it('takes an accented letter for the letter (Tébet is tebet), not for two words', async () => {
    const accented = await sandbox.call('GET', `/v1/area/search?q=${encodeURIComponent('Tébet')}`);
    expect(accented.body.data.map((a: { district_id: string }) => a.district_id)).toEqual((await sandbox.call('GET', '/v1/area/search?q=tebet')).body.data.map((a: { district_id: string }) => a.district_id));
    expect(accented.body.data.length).toBeGreaterThan(0);
  });

  it('answers an empty list when nothing matches', async () => {
    const res = await sandbox.call('GET', '/v1/area/search?q=atlantis');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: [] });
  });

  it.each([
    ['q=', 'q', 'at least 2 characters'],
    ['q=a', 'q', 'at least 2 characters'],
    ['', 'q', 'is required'],
    ['q=tebet&limit=0', 'limit', '>= 1'],
    ['q=tebet&limit=500', 'limit', '<= 100'],
    ['q=tebet&limit=many', 'limit', 'whole number'],
  ])('returns 400 for ?%s naming %s', async (query, field, message) => {
    const res = await sandbox.call('GET', `/v1/area/search?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field, message: expect.stringContaining(message) }]);
  });
});
