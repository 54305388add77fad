import { describe } from 'vitest';
import { testEngines } from '../testing/engines.js';
import { describeStoreConformance } from './conformance.js';
import { CONFORMANCE_SUBJECTS } from './engine-stores.js';

// Every engine of the run (`testEngines`: PostgreSQL always in CI) passes the same suite unchanged.
describe.each(await testEngines())('$name', ({ kind }) => {
  for (const { name, open, equalTimestamps, poolSize } of CONFORMANCE_SUBJECTS[kind]) {
    describeStoreConformance(name, open, { equalTimestamps, ...(poolSize === undefined ? {} : { poolSize }) });
  }
});
