import { routeLabelOf, statusClassOf, UNMATCHED_ROUTE } from './http.metrics';

describe('routeLabelOf', () => {
  it('is the route template, with the router mount path', () => {
    expect(routeLabelOf({ baseUrl: '', route: { path: '/v1/sales/invoices/:id' } })).toBe(
      '/v1/sales/invoices/:id',
    );
    expect(routeLabelOf({ baseUrl: '/v1', route: { path: '/events' } })).toBe('/v1/events');
  });

  it('is "unmatched" when no route ran (a body refused before routing)', () => {
    expect(routeLabelOf({ baseUrl: '', route: undefined })).toBe(UNMATCHED_ROUTE);
  });

  it('is "unmatched" when the last route was a middleware mount (no controller route matched)', () => {
    expect(routeLabelOf({ baseUrl: '', route: { path: '{/*splat}' } })).toBe(UNMATCHED_ROUTE);
  });
});

describe('statusClassOf', () => {
  it.each([
    [200, '2xx'],
    [201, '2xx'],
    [304, '3xx'],
    [409, '4xx'],
    [422, '4xx'],
    [500, '5xx'],
    [503, '5xx'],
  ])('%i → %s', (status, statusClass) => {
    expect(statusClassOf(status)).toBe(statusClass);
  });
});
