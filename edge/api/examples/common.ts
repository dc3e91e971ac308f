// What the examples of every area share: one organization, one user, and two moments, so that
// the bodies of the OpenAPI document tell of the same organization across areas.
export const ORG = 'org_3hT9xQ2mZr8vKp1L';
export const USER = 'usr_8fJ2kLm4Pq9RsT1v';
export const AT = '2026-03-02T09:30:00.000Z';
export const LATER = '2026-03-09T09:30:00.000Z';
