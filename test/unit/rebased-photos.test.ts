import { describe, expect, it } from 'vitest';
import { rebasedPhotos } from '../../src/tracking/index.js';

describe('rebasedPhotos', () => {
  it("names the request's address in each photo link of a documented example, and leaves anything else as it is", () => {
    const example = { last_status: '2', history: [{ update_on: 2, pod_photo: 'http://127.0.0.1:4010/__sandbox/pod/SBX1.png' }, { update_on: 1, pod_photo: null }, { update_on: 0, pod_photo: 7 }] };
    expect(rebasedPhotos(example, 'http://sandbox.test:5000')).toEqual({ last_status: '2', history: [{ update_on: 2, pod_photo: 'http://sandbox.test:5000/__sandbox/pod/SBX1.png' }, { update_on: 1, pod_photo: null }, { update_on: 0, pod_photo: 7 }] });
    expect(example.history[0]!.pod_photo).toBe('http://127.0.0.1:4010/__sandbox/pod/SBX1.png');
    expect(rebasedPhotos('not an answer', 'http://x')).toBe('not an answer');
  });
});
