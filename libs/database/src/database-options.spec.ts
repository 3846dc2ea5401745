import { defaultPoolSize } from './database-options';

describe('defaultPoolSize', () => {
  it('is twice the cores, at least 4', () => {
    expect([1, 2, 3, 8, 32].map((cores) => defaultPoolSize(cores))).toEqual([4, 4, 6, 16, 64]);
  });
});
