/** The authenticated tenant of a request. Every stored row belongs to exactly one company. */
export interface Company {
  id: string;
  name: string;
  countryCode: string;
  currency: string;
}
